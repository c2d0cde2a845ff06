"""The raw connections to an upstream, below the config that chooses them: a child process on
stdio with bounded reads (:mod:`~cartograph.transport.stdio_bounded`), streamable HTTP and
HTTP+SSE (:mod:`~cartograph.transport.streams`), and how an endpoint is named without its
secrets (:mod:`~cartograph.transport.endpoint`). Sessions over them are
:mod:`cartograph.upstream`'s."""
