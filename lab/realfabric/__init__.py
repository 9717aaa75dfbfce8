"""The real-network lab (``plumb lab init --real``): the fleet's fabric built from
network namespaces on this host. Every BGP switch is a namespace running FRR (zebra and
bgpd), every other switch and every GPU node a namespace with its ports, every cable a
veth pair; packets really cross it.

* :mod:`.layout` (pure): fleet -> namespaces, interface names, veths, addresses, the
  switches' base FRR configuration;
* :mod:`.build`: brings the fabric up (recording each thing before making it, in
  ``<state_dir>/realfabric.json``) and down, configuring BGP through the linux-frr driver;
* :mod:`.probes`: BGP state per device and DF pings, as typed results.
"""
