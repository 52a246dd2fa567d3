tc qdisc replace dev eth0 root cake bandwidth 20mbit diffserv4 nat
