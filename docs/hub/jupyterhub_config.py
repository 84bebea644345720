# opencode_nb on a hub: a fragment for jupyterhub_config.py (docs/deploying.md explains each line).
# `c` is the config object JupyterHub hands this file; copy the lines you need into your own config.
import os

c = get_config()  # noqa: F821  (JupyterHub defines get_config for its config file)

# The administrator's policy, applied above every user and project setting. Mount the file read-only into
# the single-user server (a ConfigMap on Kubernetes) at this path.
MANAGED = "/etc/opencode_nb/managed.yaml"

# A PostgreSQL server for sessions: one role per hub user, so the database keeps each user's sessions apart.
# The hub learns the host from its own environment; the role's password reaches the user's server through
# libpq's password file (PGPASSFILE), mounted from a secret, never through this file.
DB_HOST = os.environ.get("OPENCODE_NB_DB_HOST", "postgres")
DB_NAME = os.environ.get("OPENCODE_NB_DB_NAME", "opencode_nb")


def store_url(spawner):
    """Each user's server connects as that user's role."""
    return f"postgresql://{spawner.user.name}@{DB_HOST}/{DB_NAME}"


c.Spawner.environment = {
    "OPENCODE_NB_MANAGED_CONFIG": MANAGED,
    "OPENCODE_NB_STORE_URL": store_url,
    "PGPASSFILE": "/etc/opencode_nb-pgpass/pgpass",
}

# On Zero to JupyterHub (KubeSpawner), the same through the chart's values, and the mounts (not verified here
# against a cluster; names as in KubeSpawner's documentation):
# c.KubeSpawner.volumes = [
#     {"name": "opencode-nb-managed", "configMap": {"name": "opencode-nb-managed"}},
#     {"name": "opencode-nb-pgpass", "secret": {"secretName": "opencode-nb-pgpass-{username}",
#                                               "defaultMode": 0o400}},
# ]
# c.KubeSpawner.volume_mounts = [
#     {"name": "opencode-nb-managed", "mountPath": "/etc/opencode_nb", "readOnly": True},
#     {"name": "opencode-nb-pgpass", "mountPath": "/etc/opencode_nb-pgpass", "readOnly": True},
# ]
