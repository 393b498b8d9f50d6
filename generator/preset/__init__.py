"""`catalog preset`: the env values a user sets on one of Olares' own engine bases for an app of the catalog."""
