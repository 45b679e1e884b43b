"""Rules on the profile's own settings: logins in mirror URLs, and what the render would refuse."""
