"""Plans as notebook cells: the steps and where a plan's state lives."""
