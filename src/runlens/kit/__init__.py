"""The plugin kit: list installed plugins, write a new one, check that one conforms.

`runlens plugins`, `runlens new-plugin NAME` and `runlens check-plugin NAME` are thin
wrappers over `listing`, `scaffold` and `conformance`. A plugin's own tests reach the
conformance suite through `runlens.testing.check_plugin`.
"""
