"""Intent: the desired state a fleet declares, typed and located (stage 1 of the flow).

``intent.models`` is the file schema, ``intent.resolve`` resolves each device's
settings with one owner per field, ``intent.fleet`` loads a whole fleet repo, and
``intent.facts``/``intent.sessions`` derive addresses and BGP sessions from it.
"""
