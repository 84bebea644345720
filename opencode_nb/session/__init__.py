"""Sessions: the ordered log of messages and parts, where it is stored, and how it changes."""
