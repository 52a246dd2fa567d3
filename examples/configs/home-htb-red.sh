#!/bin/sh
# Home gateway: the DSL uplink on eth1 syncs at 22 Mbit/s; HTB shapes to 20 Mbit/s so the queue stays here.
# Voice (EF) gets 2 Mbit/s, interactive and video (AF31, AF41) 8 Mbit/s with RED, the rest 10 Mbit/s with RED.
WAN=eth1
UP=20mbit
TC=/sbin/tc

$TC qdisc del dev $WAN root 2>/dev/null

$TC qdisc add dev $WAN root handle 1: htb default 30 r2q 10
$TC class add dev $WAN parent 1: classid 1:1 htb rate $UP ceil $UP burst 15k

# voice
$TC class add dev $WAN parent 1:1 classid 1:10 htb rate 2mbit ceil $UP prio 0
$TC qdisc add dev $WAN parent 1:10 handle 10: pfifo limit 30
# interactive and video
$TC class add dev $WAN parent 1:1 classid 1:20 htb rate 8mbit ceil $UP prio 1
$TC qdisc add dev $WAN parent 1:20 handle 20: red limit 400000 min 30000 max 90000 avpkt 1000 \
    burst 55 probability 0.02 bandwidth 8mbit
# everything else
$TC class add dev $WAN parent 1:1 classid 1:30 htb rate 10mbit ceil $UP prio 2
$TC qdisc add dev $WAN parent 1:30 handle 30: red limit 400000 min 30000 max 90000 avpkt 1000 \
    burst 55 probability 0.05 bandwidth 10mbit ecn

$TC filter add dev $WAN parent 1: protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc flowid 1:10
$TC filter add dev $WAN parent 1: protocol ip prio 2 u32 match ip dsfield 0x68 0xfc flowid 1:20
$TC filter add dev $WAN parent 1: protocol ip prio 2 u32 match ip dsfield 0x88 0xfc flowid 1:20
