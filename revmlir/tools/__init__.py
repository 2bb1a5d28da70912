"""The command-line tools: ``rev-opt``, ``rev-run``, ``rev-translate``, and the
xDSL universe that makes revmlir's dialects and passes known to xDSL's own
drivers.  They are the top layer: nothing else imports them."""
