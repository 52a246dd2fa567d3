#!/bin/sh
. /etc/qos.conf
tc qdisc add dev $WAN root handle 1: htb default 10
