"""Durable state at the edge: the SQLite databases under a fleet repo's state directory
(lease, freeze, audit log, rollout journal, and the lab fleet). The only modules that
import sqlite3."""
