/* parkbox-host: the library as a box on a serial device (docs/protocol.md,
 * Serial link framing), its state in a file. The box's world is simulated
 * here: the clock is the host's UTC clock moved by TIME_SET, the battery a
 * fixed level, and the barrier cycles OPENING, OPEN, CLOSING, CLOSED after
 * an accepted access, a status report at each change.
 *
 *   parkbox-host --box box.json --serial /dev/ttyUSB0 --state box.state
 */
#define _POSIX_C_SOURCE 200809L
#include "file_store.h"
#include "parkbox.h"
#include "parkbox_mbedtls.h"
#include "provisioning.h"
#include "serial.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2

static const char USAGE[] =
    "usage: parkbox-host --box FILE --serial PATH --state FILE [options]\n"
    "\n"
    "Runs libparkbox as a box (docs/protocol.md, version 2) on a serial device.\n"
    "\n"
    "  --box FILE         the box's provisioning file (parkbench admin box provision)\n"
    "  --serial PATH      the serial device (raw mode, 8N1), e.g. /dev/ttyUSB0 or a pty\n"
    "  --state FILE       where tries, box_seq, the control sequence, the issuer keys\n"
    "                     and the revocation list survive a restart (created if absent)\n"
    "  --baud N           9600, 19200, 38400, 57600, 115200 (default) or 230400\n"
    "  --battery-mv N     the battery level the box reports (default 3700)\n"
    "  --barrier-ms N     the barrier takes N ms to open and to close, and stays\n"
    "                     open 2N ms (default 500)\n"
    "  --verbose          one line on stderr per command answered\n"
    "  --help             this text\n"
    "\n"
    "Exit status: 0 on SIGINT or SIGTERM, 1 when the device or the state file fails,\n"
    "2 on bad arguments or a bad provisioning file.\n";

typedef struct options {
    const char *box;
    const char *serial;
    const char *state;
    unsigned baud;
    unsigned battery_mv;
    unsigned barrier_ms;
    bool verbose;
} options;

static volatile sig_atomic_t stopping;

static void on_signal(int signo)
{
    (void)signo;
    stopping = 1;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "parkbox-host: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (--help for usage)\n");
    return EXIT_USAGE;
}

static bool parse_uint(const char *s, unsigned long max, unsigned *out)
{
    char *end;
    unsigned long v;
    if (s == NULL || *s == '\0' || *s == '-')
        return false;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return false;
    *out = (unsigned)v;
    return true;
}

/* Returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, options *o)
{
    int i;
    o->box = o->serial = o->state = NULL;
    o->baud = 115200;
    o->battery_mv = 3700;
    o->barrier_ms = 500;
    o->verbose = false;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(USAGE, stdout);
            return 0;
        } else if (strcmp(a, "--verbose") == 0) {
            o->verbose = true;
            continue;
        }
        if (strcmp(a, "--box") != 0 && strcmp(a, "--serial") != 0 && strcmp(a, "--state") != 0 &&
            strcmp(a, "--baud") != 0 && strcmp(a, "--battery-mv") != 0 && strcmp(a, "--barrier-ms") != 0)
            return usage_error("unknown argument %s", a);
        if (v == NULL)
            return usage_error("%s needs a value", a);
        i++;
        if (strcmp(a, "--box") == 0)
            o->box = v;
        else if (strcmp(a, "--serial") == 0)
            o->serial = v;
        else if (strcmp(a, "--state") == 0)
            o->state = v;
        else if (strcmp(a, "--baud") == 0) {
            if (!parse_uint(v, 230400, &o->baud) ||
                (o->baud != 9600 && o->baud != 19200 && o->baud != 38400 && o->baud != 57600 &&
                 o->baud != 115200 && o->baud != 230400))
                return usage_error("--baud must be 9600, 19200, 38400, 57600, 115200 or 230400, not %s", v);
        } else if (strcmp(a, "--battery-mv") == 0) {
            if (!parse_uint(v, 65535, &o->battery_mv))
                return usage_error("--battery-mv must be an integer from 0 to 65535, not %s", v);
        } else if (!parse_uint(v, 600000, &o->barrier_ms) || o->barrier_ms == 0) {
            return usage_error("--barrier-ms must be an integer from 1 to 600000, not %s", v);
        }
    }
    if (o->box == NULL)
        return usage_error("%s is required", "--box FILE");
    if (o->serial == NULL)
        return usage_error("%s is required", "--serial PATH");
    if (o->state == NULL)
        return usage_error("%s is required", "--state FILE");
    return -1;
}

/* ---- The box's world: clock, barrier ---- */

typedef struct world {
    long long clock_offset;  /* box time - host UTC, seconds (TIME_SET moves it) */
    uint16_t battery_mv;
    uint8_t barrier;
    long long barrier_due;   /* monotonic ms of the next barrier change; 0: none */
    unsigned barrier_ms;
} world;

static void pause_ms(long ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    (void)nanosleep(&ts, NULL);
}

static long long monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t box_time(const world *w)
{
    long long t = (long long)time(NULL) + w->clock_offset;
    if (t < 0)
        return 0;
    if (t > (long long)UINT32_MAX)
        return UINT32_MAX;
    return (uint32_t)t;
}

static void conditions_of(const world *w, pb_conditions *c)
{
    c->box_time = box_time(w);
    c->battery_mv = w->battery_mv;
    c->barrier = w->barrier;
    c->jammed = false;
}

typedef struct host {
    options opt;
    world w;
    pb_box box;
    int fd;
} host;

/* Sends one link frame. */
static bool send_frame(host *h, uint8_t type, const uint8_t *payload, size_t len)
{
    uint8_t frame[PB_LINK_FRAME_MAX];
    size_t n = pb_link_encode(type, payload, len, frame, sizeof frame);
    if (n == 0)
        return false;
    if (serial_write_all(h->fd, frame, n) != 0) {
        fprintf(stderr, "parkbox-host: %s: write failed: %s\n", h->opt.serial, strerror(errno));
        return false;
    }
    return true;
}

static bool send_status_report(host *h)
{
    pb_conditions c;
    uint8_t response[PB_RESPONSE_LEN];
    int r;
    conditions_of(&h->w, &c);
    r = pb_box_status_report(&h->box, &c, response);
    if (r != PB_OK) {
        fprintf(stderr, "parkbox-host: no status report: %s\n",
                r == PB_ERR_STORE ? "the state file cannot be written" : "the box failed");
        return r != PB_ERR_STORE;
    }
    return send_frame(h, PB_LINK_STATUS_REPORT, response, sizeof response);
}

static bool set_barrier(host *h, uint8_t barrier, long long due)
{
    h->w.barrier = barrier;
    h->w.barrier_due = due;
    return send_status_report(h);
}

/* The barrier's next step, when due. */
static bool step_barrier(host *h, long long now)
{
    unsigned ms = h->w.barrier_ms;
    if (h->w.barrier_due == 0 || now < h->w.barrier_due)
        return true;
    switch (h->w.barrier) {
    case PB_BARRIER_OPENING: return set_barrier(h, PB_BARRIER_OPEN, now + 2LL * ms);
    case PB_BARRIER_OPEN: return set_barrier(h, PB_BARRIER_CLOSING, now + ms);
    case PB_BARRIER_CLOSING: return set_barrier(h, PB_BARRIER_CLOSED, 0);
    default: h->w.barrier_due = 0; return true;
    }
}

static bool handle_command(host *h, const uint8_t *command, size_t len)
{
    pb_conditions c;
    pb_decision d;
    uint8_t response[PB_RESPONSE_LEN];
    long long now = monotonic_ms();
    int r;

    conditions_of(&h->w, &c);
    r = pb_box_command(&h->box, &c, command, len, &d, response);
    if (r == PB_ERR_STORE) {
        fprintf(stderr, "parkbox-host: %s: the state cannot be saved; the command is not answered\n",
                h->opt.state);
        return false;
    }
    if (r != PB_OK) {
        fprintf(stderr, "parkbox-host: the command is not answered (error %d)\n", r);
        return r != PB_ERR_EXHAUSTED;
    }
    if (h->opt.verbose)
        fprintf(stderr, "parkbox-host: kind 0x%02x key_id %lu: status 0x%02x remaining %u\n", d.kind,
                (unsigned long)d.key_id, d.status, d.remaining);
    if (d.effect == PB_EFFECT_SET_TIME)
        h->w.clock_offset = (long long)d.time - (long long)time(NULL);
    if (!send_frame(h, PB_LINK_RESPONSE, response, sizeof response))
        return false;
    if (d.effect == PB_EFFECT_OPEN) {
        if (h->w.barrier == PB_BARRIER_OPEN)
            h->w.barrier_due = now + 2LL * h->w.barrier_ms; /* held open longer */
        else if (h->w.barrier != PB_BARRIER_OPENING)
            return set_barrier(h, PB_BARRIER_OPENING, now + h->w.barrier_ms);
    }
    return true;
}

static int run(host *h)
{
    pb_frame_decoder decoder;
    uint8_t buf[256];

    pb_frame_decoder_init(&decoder);
    if (!send_status_report(h))
        return 1;
    while (!stopping) {
        struct pollfd p;
        long long now = monotonic_ms();
        int timeout = -1;
        int ready;
        ssize_t n, i;

        if (h->w.barrier_due != 0)
            timeout = h->w.barrier_due > now ? (int)(h->w.barrier_due - now) : 0;
        p.fd = h->fd;
        p.events = POLLIN;
        p.revents = 0;
        ready = poll(&p, 1, timeout);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0) {
            fprintf(stderr, "parkbox-host: poll: %s\n", strerror(errno));
            return 1;
        }
        if (!step_barrier(h, monotonic_ms()))
            return 1;
        if (ready == 0)
            continue;
        if ((p.revents & (POLLHUP | POLLERR)) != 0 && (p.revents & POLLIN) == 0) {
            /* The other end of a pty is closed: wait for it to come back. */
            pause_ms(100);
            continue;
        }
        n = read(h->fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EIO)) {
            if (errno == EIO)
                pause_ms(100);
            continue;
        }
        if (n < 0) {
            fprintf(stderr, "parkbox-host: %s: read: %s\n", h->opt.serial, strerror(errno));
            return 1;
        }
        if (n == 0) {
            /* End of file: no writer on the other end; wait rather than spin. */
            pause_ms(100);
            continue;
        }
        for (i = 0; i < n; i++) {
            uint8_t type;
            const uint8_t *payload;
            size_t len;
            if (!pb_frame_decoder_push(&decoder, buf[i], &type, &payload, &len))
                continue;
            if (type == PB_LINK_COMMAND) {
                if (!handle_command(h, payload, len))
                    return 1;
            } else if (type == PB_LINK_STATUS_REQUEST) {
                if (!send_status_report(h))
                    return 1;
            }
            /* 0x81 and 0x82 are the box's own types: not for a box to answer. */
        }
    }
    if (h->opt.verbose)
        fprintf(stderr,
                "parkbox-host: link: %lu frames, %lu bad CRC, %lu bad COBS, %lu oversize, %lu unknown type\n",
                (unsigned long)decoder.counters.frames, (unsigned long)decoder.counters.bad_crc,
                (unsigned long)decoder.counters.bad_cobs, (unsigned long)decoder.counters.oversize,
                (unsigned long)decoder.counters.unknown_type);
    return 0;
}

int main(int argc, char **argv)
{
    static host h;
    static pb_mbedtls engine;
    pb_crypto_port crypto;
    pb_store_port store;
    pb_file_store file;
    pb_provisioning prov;
    char error[512];
    struct sigaction sa;
    int code;

    code = parse_args(argc, argv, &h.opt);
    if (code >= 0)
        return code;
    if (pb_mbedtls_init(&engine, &crypto) != 0) {
        fprintf(stderr, "parkbox-host: mbed TLS did not start\n");
        return 1;
    }
    if (!pb_provisioning_read(h.opt.box, &crypto, &prov, error, sizeof error)) {
        fprintf(stderr, "parkbox-host: %s\n", error);
        return EXIT_USAGE;
    }
    if (!pb_file_store_open(&file, h.opt.state, &store)) {
        fprintf(stderr, "parkbox-host: %s: %s\n", h.opt.state, strerror(errno));
        return EXIT_USAGE;
    }
    if (pb_box_start(&h.box, &prov.config, &crypto, &store, prov.has_issuer_key ? prov.issuer_key : NULL,
                     prov.has_issuer_key_previous ? prov.issuer_key_previous : NULL) != PB_OK) {
        fprintf(stderr, "parkbox-host: %s: the state cannot be read or written\n", h.opt.state);
        return 1;
    }
    h.fd = serial_open(h.opt.serial, h.opt.baud);
    if (h.fd < 0) {
        fprintf(stderr, "parkbox-host: %s: %s\n", h.opt.serial, strerror(errno));
        return EXIT_USAGE;
    }
    h.w.clock_offset = 0;
    h.w.battery_mv = (uint16_t)h.opt.battery_mv;
    h.w.barrier = PB_BARRIER_CLOSED;
    h.w.barrier_due = 0;
    h.w.barrier_ms = h.opt.barrier_ms;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    fprintf(stderr, "parkbox-host: box %lu (%s, parking %lu) on %s, state %s, box_seq %lu\n",
            (unsigned long)prov.config.module_id,
            prov.config.direction == PB_DIRECTION_ENTRANCE ? "entrance" : "exit",
            (unsigned long)prov.config.parking_id, h.opt.serial, h.opt.state,
            (unsigned long)h.box.state.box_seq);
    code = run(&h);
    close(h.fd);
    pb_file_store_close(&file);
    pb_mbedtls_free(&engine);
    return code;
}
