# SPDX-License-Identifier: GPL-2.0-or-later
"""The spice-gtk client the desktop tests drive (test_desktop_clipboard.py,
test_desktop_files.py): SpiceClientGLib from Debian's python, in a
subprocess the test file starts as a script. It connects, says "agent ..."
once the guest's agent and its capabilities are there ("agent-gone" when
the server says the agent went, and "agent ..." again when it is back), reads one command
per line on stdin and prints events on stdout, a line each; each test file
brings its own commands and signal handlers.

Not a pytest module: imported by the test files' client side only."""

import sys

CAP_CLIPBOARD_BY_DEMAND = 5


def say(*words):
    print(*words, flush=True)


def run(argv, agent_says, on_main=None, on_display=None, commands=None):
    """Serve a session to HOST PORT for SECONDS (argv) until stdin closes,
    'quit' comes or the time is up, then say "done".

    agent_says(main) -> the words after "agent", said once, when the
    agent is connected with its capabilities. on_main(main) and
    on_display(display) connect the file's signal handlers to a new
    channel; commands maps a command's first word to fn(main, words)."""
    import gi
    gi.require_version('SpiceClientGLib', '2.0')
    from gi.repository import GLib, GObject, SpiceClientGLib as Spice

    host, port, seconds = argv[:3]
    loop = GLib.MainLoop()
    session = Spice.Session(host=host, port=port)
    state = {"main": None, "told": False}
    commands = dict(commands or {})

    def on_agent_update(main):
        connected = main.get_property('agent-connected')
        if state["told"] and not connected:
            state["told"] = False       # said again when it comes back
            say("agent-gone")
            return
        if state["told"] or not connected:
            return
        if not main.agent_test_capability(CAP_CLIPBOARD_BY_DEMAND):
            return              # the guest's caps have not come yet
        state["told"] = True
        say("agent", *agent_says(main))

    def on_channel(sess, channel):
        if isinstance(channel, Spice.MainChannel):
            state["main"] = channel
            GObject.Object.connect(channel, 'main-agent-update', on_agent_update)
            if on_main:
                on_main(channel)
        elif isinstance(channel, Spice.DisplayChannel) and on_display:
            on_display(channel)
        channel.connect()

    def on_stdin(source, cond):
        line = sys.stdin.readline()
        words = line.split()
        if not line or words[:1] == ["quit"]:
            loop.quit()
            return False
        if words and words[0] in commands:
            commands[words[0]](state["main"], words)
        elif words:
            say("unknown-command", words[0])
        return True

    GObject.Object.connect(session, 'channel-new', on_channel)
    session.connect()
    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
    GLib.timeout_add(int(float(seconds) * 1000), loop.quit)
    loop.run()
    session.disconnect()
    say("done")
