"""Configuration: the schema, and finding, merging and validating the files that fill it."""

from ..errors import ConfigError
from .load import ConfigWarning, LoadedConfig, load_config
from .paths import global_config_dir
from .schema import AgentConfig, CompactionConfig, Config, ModelConfig

__all__ = [
    "AgentConfig",
    "CompactionConfig",
    "Config",
    "ConfigError",
    "ConfigWarning",
    "LoadedConfig",
    "ModelConfig",
    "global_config_dir",
    "load_config",
]
