#!/bin/bash
# Home gateway: tbf shapes eth0 to 18 Mbit/s (cable uplink 20 Mbit/s); three strict-priority bands behind it.
DEV=eth0

tc qdisc del dev $DEV root
tc qdisc add dev $DEV root handle 1: tbf rate 18mbit burst 32kb latency 50ms
tc qdisc add dev $DEV parent 1:1 handle 10: prio bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1
tc qdisc add dev $DEV parent 10:1 handle 11: pfifo limit 50
tc qdisc add dev $DEV parent 10:2 handle 12: pfifo limit 100
tc qdisc add dev $DEV parent 10:3 handle 13: bfifo limit 150000

# EF to band 0; CS1 (scavenger, precedence 1) to the last band
tc filter add dev $DEV parent 10: protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc flowid 10:1
tc filter add dev $DEV parent 10: protocol ip prio 2 u32 match ip dsfield 0x20 0xfc flowid 10:3
