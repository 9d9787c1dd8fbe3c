/* SPDX-License-Identifier: GPL-2.0-or-later */
/* End to end: spice-gtk (SpiceClientGLib) and our emulated agent, clipboard both ways over the real net layer. */
#include "channels/qs-agent-channel.h"
#include "channels/qs-channels-agent.h"
#include "channels/qs-channels.h"
#include "fake-peers.h"
#include "net/qs-net-config.h"
#include "net/qs-server.h"

#include <gio/gio.h>
#include <string.h>

/* Many pieces each way: the client's text needs token returns (10 granted),
 * the server's is cut into 2048-byte pieces. */
#define TEXT_A_LEN 100000u
#define TEXT_B_LEN 150000u

/* The backend plays qemu: it asks for what the client copied, then copies
 * something itself and hands it over when the client asks. */
typedef struct {
    QsChannels *hub;
    GString *log;
    GBytes *got;
    GBytes *text_b;
} Backend;

static gboolean later_request(gpointer data)
{
    qs_agent_backend_request(((Backend *)data)->hub, 0);
    return G_SOURCE_REMOVE;
}

static gboolean later_grab(gpointer data)
{
    qs_agent_backend_grab(((Backend *)data)->hub, 0);
    return G_SOURCE_REMOVE;
}

static gboolean later_data(gpointer data)
{
    Backend *be = data;

    qs_agent_backend_data(be->hub, 0, be->text_b);
    return G_SOURCE_REMOVE;
}

static void be_grab(gpointer backend, uint8_t sel)
{
    Backend *be = backend;

    g_string_append_printf(be->log, "grab %u;", sel);
    g_idle_add(later_request, be);
}

static void be_release(gpointer backend, uint8_t sel)
{
    g_string_append_printf(((Backend *)backend)->log, "release %u;", sel);
}

static void be_fetch(gpointer backend, uint8_t sel)
{
    g_string_append_printf(((Backend *)backend)->log, "fetch %u;", sel);
    g_idle_add(later_data, backend);
}

static void be_provide(gpointer backend, uint8_t sel, const uint8_t *data, size_t size)
{
    Backend *be = backend;

    g_string_append_printf(be->log, "provide %u %zu;", sel, data ? size : 0);
    if (data && !be->got) {
        be->got = g_bytes_new(data, size);
        g_idle_add(later_grab, be);
    }
}

static const QsAgentBackendOps ops = {
    .grab = be_grab,
    .release = be_release,
    .fetch = be_fetch,
    .provide = be_provide,
};

typedef struct {
    GMainLoop *loop;
    gboolean timed_out;
} Wait;

static void on_exited(GObject *source, GAsyncResult *res, gpointer user_data)
{
    g_subprocess_wait_finish(G_SUBPROCESS(source), res, NULL);
    g_main_loop_quit(((Wait *)user_data)->loop);
}

static gboolean on_timeout(gpointer user_data)
{
    Wait *wait = user_data;

    wait->timed_out = TRUE;
    g_main_loop_quit(wait->loop);
    return G_SOURCE_REMOVE;
}

static void on_output(GObject *source, GAsyncResult *res, gpointer user_data)
{
    g_autoptr(GError) error = NULL;

    g_subprocess_communicate_utf8_finish(G_SUBPROCESS(source), res, user_data, NULL, &error);
    g_assert_no_error(error);
}

static void test_clipboard_both_ways(void)
{
    const char *script = g_getenv("QS_SPICE_GI_AGENT");
    g_autoptr(GError) error = NULL;
    g_autoptr(GSubprocess) proc = NULL;
    g_autofree char *out = NULL, *len_a = g_strdup_printf("%u", TEXT_A_LEN);
    g_autofree char *port = NULL, *expect = NULL;
    g_autofree uint8_t *text_b = g_malloc(TEXT_B_LEN);
    QsChannelsConfig ccfg = { .vm_name = "agent" };
    QsNetConfig ncfg;
    QsServer *server;
    Backend be = { 0 };
    Wait wait = { 0 };
    guint timeout;
    uint32_t sum = 0;

    if (!script || !g_file_test("/usr/lib/x86_64-linux-gnu/girepository-1.0/SpiceClientGLib-2.0.typelib",
                                G_FILE_TEST_EXISTS)) {
        g_test_fail_printf("SpiceClientGLib typelib (gir1.2-spiceclientglib-2.0) "
                           "or the client script is missing");
        return;
    }
    for (guint i = 0; i < TEXT_B_LEN; i++) {
        text_b[i] = (uint8_t)('A' + i % 26);
        sum += text_b[i];
    }
    be.log = g_string_new(NULL);
    be.text_b = g_bytes_new(text_b, TEXT_B_LEN);
    ccfg.screen = qs_screen_new();
    be.hub = qs_channels_new(&ccfg);
    qs_agent_set_backend(be.hub, &ops, &be, TRUE);
    qs_net_config_init(&ncfg);
    ncfg.listen = g_strdup("127.0.0.1:0");
    ncfg.disable_ticketing = TRUE;
    g_assert_true(qs_net_config_validate(&ncfg, &error));
    server = qs_server_new(&ncfg, qs_channels_server_callbacks(), be.hub, &error);
    g_assert_no_error(error);
    port = g_strdup_printf("%u", qs_server_get_port(server, FALSE));

    proc = g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "/usr/bin/python3",
                            script, "127.0.0.1", port, len_a, NULL);
    g_assert_no_error(error);
    g_subprocess_communicate_utf8_async(proc, NULL, NULL, on_output, &out);
    wait.loop = g_main_loop_new(NULL, FALSE);
    g_subprocess_wait_async(proc, NULL, on_exited, &wait);
    timeout = g_timeout_add_seconds(25, on_timeout, &wait);
    g_main_loop_run(wait.loop);
    if (wait.timed_out) {
        g_subprocess_force_exit(proc);
        g_error("the client did not finish within 25 s");
    }
    g_source_remove(timeout);
    g_main_loop_unref(wait.loop);
    for (int i = 0; i < 100 && !out; i++) {
        g_main_context_iteration(NULL, TRUE);
    }
    g_assert_nonnull(out);
    g_test_message("client said:\n%s\nbackend: %s", out, be.log->str);

    /* Client -> "qemu": the exact text. */
    g_assert_nonnull(strstr(out, "request 0 1\n"));
    g_assert_nonnull(be.got);
    g_assert_cmpuint(g_bytes_get_size(be.got), ==, TEXT_A_LEN);
    for (guint i = 0; i < TEXT_A_LEN; i += 997) {
        g_assert_cmpuint(((const uint8_t *)g_bytes_get_data(be.got, NULL))[i], ==, 'a' + i % 26);
    }
    /* "qemu" -> client: a grab, the client's request, the whole text. */
    g_assert_nonnull(strstr(out, "grab 0 1\n"));
    expect = g_strdup_printf("data 0 1 %u %u ABCDEFGH\n", TEXT_B_LEN, sum % 65521);
    g_assert_nonnull(strstr(out, expect));
    g_assert_cmpstr(be.log->str, ==, "grab 0;provide 0 100000;fetch 0;");

    qs_server_free(server);
    qs_agent_set_backend(be.hub, NULL, NULL, FALSE);
    qs_channels_free(be.hub);
    for (int i = 0; i < 100 && g_main_context_iteration(NULL, FALSE); i++) {
    }
    qs_net_config_clear(&ncfg);
    qs_screen_free(ccfg.screen);
    g_string_free(be.log, TRUE);
    g_bytes_unref(be.got);
    g_bytes_unref(be.text_b);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/agent-client/clipboard-both-ways", test_clipboard_both_ways);
    return g_test_run();
}
