"""Names the dead-code check (vulture, `make lint`) must count as used: each is used by a
caller outside our Python (a library calling back, a protocol, pytest, the standard library),
so no Python line of ours reads it. Never executed; vulture only parses it."""

from vulture.whitelist_utils import Whitelist

_ = Whitelist()

# DataPoint fields cognee stores and our queries read back by name (store/models.py)
_.truth_alignment
_.truth_epoch
_.metadata
_.stance
# PEP 562: the package's lazy attributes (memory_core/__init__.py)
_.__getattr__
# litellm's CustomLogger callbacks and their arguments (judging/llm.py)
_.async_log_success_event
_.async_log_failure_event
_.start_time
_.end_time
# litellm's switch for its "Give Feedback / Get Help" banner, read by litellm (judging/llm.py)
_.suppress_debug_info
# the MCP SDK: a tool registered by its decorator, the argument model's validation hook, the
# signature FastMCP reads (mcp/server.py)
_.add_beliefs
_.validate_arguments
_.__signature__
# wrappers that carry the wrapped callable's name for cognee's task log and tracebacks
_.__qualname__
# __aexit__'s third argument (session.py)
_.trace
# the CLI's exit-code table (shell/commands.py): every code is documented in docs/cli.md
_.EXIT_BUSY
_.EXIT_EMBEDDER
_.EXIT_INPUT
_.EXIT_JUDGE
# psycopg connections: an attribute the driver reads
_.autocommit
# the rows' sequence number, read in the query's order, not by name (store/backends/postgres.py)
_.seq
# logging.LogRecord: the formatter reads exc_text (store/environment.py)
_.exc_text
# an exception's partial results, read by the caller that catches it (judging/detect.py)
_.detections
# uvicorn's Server: attributes and an override's parameters uvicorn reads or passes (web/)
_.should_exit
_.capture_signals
_.poll_interval
_.disconnected
# http.server / socketserver: handler methods and class attributes the library calls or reads
# (tests/support/llm_stub.py)
_.do_GET
_.do_POST
_.log_message
_.protocol_version
_.daemon_threads
# the interpreter and the standard library read these (tests/support/forkserver.py, shell/launcher.py)
_.tempdir
_.dont_write_bytecode
_.__stdin__
_.__stderr__
# pytest: hooks (with their arguments) and the module-level marks it reads
_.pytest_runtest_logreport
_.pytest_terminal_summary
_.pytest_sessionfinish
_.pytest_collection_modifyitems
_.pytest_collection_finish
_.pytest_runtest_teardown
_.exitstatus
_.pytestmark
# the import system's and isinstance's protocols, and what a test reads from a child process
# (store/lazy_imports.py)
_.__instancecheck__
_.create_module
_.loaded_by
_.placeholder
# the io protocol of the standard streams' proxy, called by whoever writes to sys.stdout (store/streams.py)
_.writable
# a TypedDict's key, written and read as a string (shell/launcher.py's Inherited)
_.unset
