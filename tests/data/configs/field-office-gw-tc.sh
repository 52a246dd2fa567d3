#!/bin/sh
# Office gateway: 200 Mbit/s fibre, upstream shaped to 95 Mbit/s
set -e
DEV=eth1
TC=/sbin/tc
UP=95mbit

$TC qdisc del dev $DEV root 2>/dev/null || true
$TC qdisc add dev $DEV root handle 1: htb default 40 r2q 10
$TC class add dev $DEV parent 1: classid 1:1 htb rate $UP ceil $UP burst 30k

# voice: EF
$TC class add dev $DEV parent 1:1 classid 1:10 htb \
    rate 10mbit ceil 20mbit burst 15k prio 0
# interactive / business
$TC class add dev $DEV parent 1:1 classid 1:20 htb rate 40mbit ceil $UP prio 1
# bulk
$TC class add dev $DEV parent 1:1 classid 1:30 htb rate 15mbit ceil $UP prio 2
# default
$TC class add dev $DEV parent 1:1 classid 1:40 htb rate 30mbit ceil $UP prio 3

$TC qdisc add dev $DEV parent 1:10 handle 10: pfifo limit 50
$TC qdisc add dev $DEV parent 1:20 handle 20: red limit 400000 min 30000 max 90000 \
	avpkt 1000 burst 55 probability 0.02 bandwidth 40mbit
$TC qdisc add dev $DEV parent 1:30 handle 30: bfifo limit 300kb
$TC qdisc add dev $DEV parent 1:40 handle 40: pfifo limit 200

# classify by DSCP (TOS byte): EF=0xb8, AF21/22/23, AF11/12/13
$TC filter add dev $DEV parent 1: protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc flowid 1:10
$TC filter add dev $DEV parent 1: protocol ip prio 2 u32 match ip dsfield 0x48 0xfc flowid 1:20
$TC filter add dev $DEV parent 1: protocol ip prio 2 u32 match ip dsfield 0x50 0xfc flowid 1:20
$TC filter add dev $DEV parent 1: protocol ip prio 2 u32 match ip dsfield 0x58 0xfc flowid 1:20
$TC filter add dev $DEV parent 1: protocol ip prio 3 u32 match ip tos 0x28 0xfc flowid 1:30
$TC filter add dev $DEV parent 1: protocol ip prio 3 u32 match ip tos 0x30 0xfc flowid 1:30
$TC filter add dev $DEV parent 1: protocol ip prio 3 u32 match ip tos 0x38 0xfc flowid 1:30
$TC filter add dev $DEV parent 1: protocol ip prio 4 u32 match ip dport 22 0xffff flowid 1:20
echo "qos applied on $DEV"
