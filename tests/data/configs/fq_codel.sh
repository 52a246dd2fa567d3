#!/bin/sh
tc qdisc add dev eth0 root handle 1: htb default 10
tc class add dev eth0 parent 1: classid 1:1 htb rate 50mbit
tc class add dev eth0 parent 1:1 classid 1:10 htb rate 50mbit
tc qdisc add dev eth0 parent 1:10 handle 10: fq_codel
