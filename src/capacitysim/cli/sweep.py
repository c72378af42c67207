"""CLI commands (placeholder; filled by its issue)."""
