"""Configuration: the schema, and finding, merging and validating the files that fill it."""

from ..errors import ConfigError
from .load import CONFIG_ENV, ConfigWarning, LoadedConfig, load_config
from .paths import global_config_dir, project_root
from .schema import AgentConfig, CommandConfig, CompactionConfig, Config, ModelConfig, ProviderConfig

__all__ = [
    "CONFIG_ENV",
    "AgentConfig",
    "CommandConfig",
    "CompactionConfig",
    "Config",
    "ConfigError",
    "ConfigWarning",
    "LoadedConfig",
    "ModelConfig",
    "ProviderConfig",
    "global_config_dir",
    "load_config",
    "project_root",
]
