"""Data: the generic config updater's field-operation rule files of each SONiC release,
as sonic-utilities ships them (Apache-2.0; sources and commits in ``SOURCES.json``),
read by :mod:`reconciler.drivers.sonic_gcu`."""
