"""NetBox settings of the suite's throwaway server (read by NetBox, not by plumb).

tests/nbserver.py copies this file to ``$NETBOX_ROOT/conf/configuration.py``; every
value that differs between runs (database, ports) comes from the environment.
"""

import os

ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ["PLUMB_NB_DB_NAME"],
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": "127.0.0.1",
        "PORT": os.environ["PLUMB_NB_DB_PORT"],
        "CONN_MAX_AGE": 300,
        # a per-test reset drops and re-creates the database under the server: a kept
        # connection is checked before use instead of failing the next request
        "CONN_HEALTH_CHECKS": True,
    }
}

_REDIS = {
    "HOST": "127.0.0.1",
    "PORT": int(os.environ["PLUMB_NB_REDIS_PORT"]),
    "USERNAME": "",
    "PASSWORD": "",
    "SSL": False,
}
REDIS = {
    "tasks": {**_REDIS, "DATABASE": 0},
    "caching": {**_REDIS, "DATABASE": 1},
}

# A throwaway server on 127.0.0.1: fixed secrets are fine (>= 50 characters each).
SECRET_KEY = "plumb-suite-netbox-secret-key-not-for-production-0123456789"
# v2 API tokens (nbt_<key>.<token>) are HMAC'd with a pepper; without one none can be made
API_TOKEN_PEPPERS = {1: "plumb-suite-netbox-token-pepper-not-for-production-0123456789"}

DEBUG = False
CENSUS_REPORTING_ENABLED = False
RELEASE_CHECK_URL = None
TIME_ZONE = "UTC"
