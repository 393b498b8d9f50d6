"""The memory budget of an app: the fit, its GPU sizing, the decode-speed roofline and the app on each device.

The package's stage in the flow: docs/architecture.md."""
