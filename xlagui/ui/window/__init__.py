"""The main window: its layout, actions and menus, and what a drop on it opens."""
