/* The persistence rule (README.md): a power loss in the middle of a save
 * never leaves a state that opens more than it should. A RAM store loses
 * power after N bytes of writes, for every N across the save of each kind of
 * command that changes the state (a try counted, a REVOKE, a SET_ISSUER, a
 * TIME_SET); the box started again on that store must hold exactly the state
 * before the command (and then nothing was answered or opened) or exactly
 * the state after it. */
#include "check.h"
#include "parkbox.h"
#include "parkbox_mbedtls.h"

#include <stdio.h>
#include <string.h>

static pb_crypto_port crypto;
static pb_mbedtls engine;

/* ---- A RAM store whose power fails after `budget` bytes written ---- */

typedef struct ram_store {
    uint8_t slots[2][PB_STATE_IMAGE_LEN];
    long budget;           /* bytes that may still be written; < 0: unlimited */
    bool off;              /* power lost: nothing more is written */
    unsigned long written; /* bytes written (erase counts its bytes) */
} ram_store;

static bool ram_read(void *ctx, unsigned slot, size_t offset, uint8_t *out, size_t len)
{
    ram_store *s = ctx;
    if (slot > 1 || offset + len > PB_STATE_IMAGE_LEN)
        return false;
    memcpy(out, s->slots[slot] + offset, len);
    return true;
}

/* Writes what the budget allows, byte by byte in order, then loses power. */
static bool ram_program(ram_store *s, unsigned slot, size_t offset, const uint8_t *data, size_t len,
                        bool erase)
{
    size_t i;
    if (slot > 1 || offset + len > PB_STATE_IMAGE_LEN || s->off)
        return false;
    for (i = 0; i < len; i++) {
        if (s->budget == 0) {
            s->off = true;
            return false;
        }
        if (s->budget > 0)
            s->budget--;
        s->slots[slot][offset + i] = erase ? 0xFF : data[i];
        s->written++;
    }
    return true;
}

static bool ram_write(void *ctx, unsigned slot, size_t offset, const uint8_t *data, size_t len)
{
    return ram_program(ctx, slot, offset, data, len, false);
}

static bool ram_erase(void *ctx, unsigned slot)
{
    return ram_program(ctx, slot, 0, NULL, PB_STATE_IMAGE_LEN, true);
}

static void ram_init(ram_store *s, pb_store_port *port)
{
    memset(s->slots, 0xFF, sizeof s->slots);
    s->budget = -1;
    s->off = false;
    s->written = 0;
    port->ctx = s;
    port->read = ram_read;
    port->write = ram_write;
    port->erase = ram_erase;
}

/* ---- A box and its commands ---- */

static const uint8_t PARKING_KEY[16] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                         0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };
static const uint8_t BOX_KEY[16] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
                                     0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf };
/* The vectors' issuer 0 public key (a point on P-256). */
static const char ISSUER_HEX[] =
    "515c3d6eb9e396b904d3feca7f54fdcd0cc1e997bf375dca515ad0a6c3b4035f"
    "4536be3a50f318fbf9a5475902a221502bef0d57e08c53b2cc0a56f17d9f9354";
static uint8_t issuer[64];

#define NOW 1767225660u

static void config_of(pb_box_config *c)
{
    memset(c, 0, sizeof *c);
    c->module_id = 101;
    c->parking_id = 7;
    c->direction = PB_DIRECTION_ENTRANCE;
    c->has_parking_key = true;
    memcpy(c->parking_key, PARKING_KEY, 16);
    memcpy(c->box_key, BOX_KEY, 16);
    c->skew_seconds = 120;
    c->min_battery_mv = 3300;
    c->revocation_capacity = PB_REVOCATION_CAPACITY;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Seals a command as the service does. */
static size_t seal(uint8_t kind, uint32_t key_id, uint32_t scope, const uint8_t *key,
                   const uint8_t *body, size_t n, uint8_t nonce_byte, uint8_t *frame)
{
    frame[0] = PB_VERSION;
    frame[1] = kind;
    put32(frame + 2, key_id);
    put32(frame + 6, scope);
    memset(frame + 10, nonce_byte, 12);
    memcpy(frame + 22, body, n);
    pb_ccm_seal(&crypto, key, frame + 10, frame, 22, frame + 22, n, frame + 22 + n);
    return 22 + n + 8;
}

static size_t access_command(uint32_t key_id, uint8_t *frame)
{
    uint8_t body[15];
    put32(body, NOW - 600);
    put32(body + 4, NOW + 3600);
    body[8] = 1; /* one entry */
    body[9] = 1;
    body[10] = 1;
    put32(body + 11, 101);
    return seal(PB_KIND_ACCESS, key_id, 7, PARKING_KEY, body, sizeof body, 0x11, frame);
}

static size_t revoke_command(uint32_t seq, uint8_t *frame)
{
    uint8_t body[17];
    body[0] = 2;
    put32(body + 1, 900);
    put32(body + 5, NOW + 3600);
    put32(body + 9, 901);
    put32(body + 13, NOW + 7200);
    return seal(PB_KIND_REVOKE, seq, 101, BOX_KEY, body, sizeof body, 0x22, frame);
}

static size_t set_issuer_command(uint32_t seq, uint8_t *frame)
{
    uint8_t body[128];
    memcpy(body, issuer, 64);
    memset(body + 64, 0, 64);
    return seal(PB_KIND_SET_ISSUER, seq, 101, BOX_KEY, body, sizeof body, 0x33, frame);
}

static size_t time_set_command(uint32_t seq, uint8_t *frame)
{
    uint8_t body[4];
    put32(body, NOW + 5);
    return seal(PB_KIND_TIME_SET, seq, 101, BOX_KEY, body, sizeof body, 0x44, frame);
}

static bool same_state(const pb_box_state *a, const pb_box_state *b)
{
    unsigned i;
    if (a->box_seq != b->box_seq || a->last_control_seq != b->last_control_seq ||
        a->has_issuer_key != b->has_issuer_key || a->has_issuer_key_previous != b->has_issuer_key_previous ||
        memcmp(a->issuer_key, b->issuer_key, 64) != 0 ||
        memcmp(a->issuer_key_previous, b->issuer_key_previous, 64) != 0 ||
        a->revocation_count != b->revocation_count)
        return false;
    for (i = 0; i < a->revocation_count; i++)
        if (a->revocations[i].key_id != b->revocations[i].key_id ||
            a->revocations[i].until != b->revocations[i].until)
            return false;
    for (i = 0; i < PB_TRIES_CAPACITY; i++)
        if (a->tries[i].count != b->tries[i].count ||
            (a->tries[i].count > 0 && (a->tries[i].key_id != b->tries[i].key_id ||
                                       a->tries[i].not_after != b->tries[i].not_after)))
            return false;
    return true;
}

static const pb_conditions conditions = { NOW, 3700, PB_BARRIER_CLOSED, false };
static const uint8_t nothing[PB_RESPONSE_LEN];

/* Runs `command` on the box saved in `before` with power lost after every
 * possible count of bytes written, and checks what a restart finds. */
static void cut_everywhere(const ram_store *before, const uint8_t *command, size_t len,
                           uint8_t expect_status, const char *name)
{
    static ram_store store;
    pb_store_port port;
    pb_box box;
    pb_box_config config;
    pb_box_state old_state, new_state;
    pb_decision d;
    uint8_t response[PB_RESPONSE_LEN];
    unsigned long full, k;
    unsigned restarts_old = 0, restarts_new = 0, bad = 0, answered_early = 0;
    char context[160];

    config_of(&config);
    /* The state before, and the whole save's length and state after. */
    ram_init(&store, &port);
    memcpy(store.slots, before->slots, sizeof store.slots);
    CHECK(pb_box_start(&box, &config, &crypto, &port, NULL, NULL) == PB_OK, name);
    old_state = box.state;
    store.written = 0;
    CHECK(pb_box_command(&box, &conditions, command, len, &d, response) == PB_OK && d.status == expect_status,
          name);
    new_state = box.state;
    full = store.written;
    CHECK(!same_state(&old_state, &new_state), name);

    for (k = 0; k <= full; k++) {
        int r;
        ram_init(&store, &port);
        memcpy(store.slots, before->slots, sizeof store.slots);
        CHECK(pb_box_start(&box, &config, &crypto, &port, NULL, NULL) == PB_OK, name);
        store.budget = (long)k;
        memset(response, 0, sizeof response);
        r = pb_box_command(&box, &conditions, command, len, &d, response);
        /* Nothing is answered before the save is whole. */
        if (k < full && (r != PB_ERR_STORE || !pb_equal_ct(response, nothing, PB_RESPONSE_LEN)))
            answered_early++;
        /* Power back: start the box on what the store holds. */
        store.budget = -1;
        store.off = false;
        if (pb_box_start(&box, &config, &crypto, &port, NULL, NULL) != PB_OK) {
            bad++;
            continue;
        }
        if (same_state(&box.state, &old_state))
            restarts_old++;
        else if (same_state(&box.state, &new_state))
            restarts_new++;
        else
            bad++;
        /* A save that completed holds the new state; one cut short the old. */
        if (k == full && !same_state(&box.state, &new_state))
            bad++;
    }
    snprintf(context, sizeof context, "%s: %lu cut points, %u old, %u new", name, full + 1, restarts_old,
             restarts_new);
    printf("  %s\n", context);
    CHECK(bad == 0, context);
    CHECK(answered_early == 0, context);
    CHECK(restarts_old == full, context); /* every cut short of the end: the old state */
    CHECK(restarts_new == 1, context);
}

int main(void)
{
    static ram_store base;
    pb_store_port port;
    pb_box box;
    pb_box_config config;
    pb_decision d;
    uint8_t frame[256], response[PB_RESPONSE_LEN];
    size_t len, i;

    if (pb_mbedtls_init(&engine, &crypto) != 0)
        return 2;
    for (i = 0; i < 64; i++) {
        unsigned v;
        sscanf(ISSUER_HEX + 2 * i, "%2x", &v);
        issuer[i] = (uint8_t)v;
    }
    config_of(&config);

    /* A new box on an empty store saves its first state. */
    ram_init(&base, &port);
    CHECK(pb_box_start(&box, &config, &crypto, &port, NULL, NULL) == PB_OK, "a new box starts");
    CHECK(box.state.box_seq == 0 && !box.state.has_issuer_key, "a new box's state");

    /* Some history, so both slots hold images. */
    len = access_command(1000, frame);
    CHECK(pb_box_command(&box, &conditions, frame, len, &d, response) == PB_OK && d.status == PB_STATUS_OK,
          "history: an ACCESS");
    len = revoke_command(10, frame);
    CHECK(pb_box_command(&box, &conditions, frame, len, &d, response) == PB_OK && d.status == PB_STATUS_OK,
          "history: a REVOKE");

    len = access_command(42, frame);
    cut_everywhere(&base, frame, len, PB_STATUS_OK, "ACCESS, its try counted");
    len = revoke_command(11, frame);
    cut_everywhere(&base, frame, len, PB_STATUS_OK, "REVOKE");
    len = set_issuer_command(12, frame);
    cut_everywhere(&base, frame, len, PB_STATUS_OK, "SET_ISSUER");
    len = time_set_command(13, frame);
    cut_everywhere(&base, frame, len, PB_STATUS_OK, "TIME_SET");
    len = access_command(1000, frame);
    cut_everywhere(&base, frame, len, PB_STATUS_NO_TRIES_LEFT, "ACCESS refused (box_seq alone moves)");

    /* After a failed save the box takes the store's state back and goes on. */
    {
        static ram_store store;
        pb_box_state old_state;
        ram_init(&store, &port);
        memcpy(store.slots, base.slots, sizeof store.slots);
        CHECK(pb_box_start(&box, &config, &crypto, &port, NULL, NULL) == PB_OK, "restart");
        old_state = box.state;
        store.budget = 100;
        len = access_command(42, frame);
        CHECK(pb_box_command(&box, &conditions, frame, len, &d, response) == PB_ERR_STORE,
              "a failed save answers nothing");
        CHECK(same_state(&box.state, &old_state), "the box takes the saved state back");
        store.budget = -1;
        store.off = false;
        CHECK(pb_box_command(&box, &conditions, frame, len, &d, response) == PB_OK && d.status == PB_STATUS_OK &&
                  d.remaining == 0,
              "the try not saved was not spent: the key opens once");
        CHECK(pb_box_command(&box, &conditions, frame, len, &d, response) == PB_OK &&
                  d.status == PB_STATUS_NO_TRIES_LEFT,
              "and only once");
    }

    /* The first save of a new box cut short: it starts as a new box again. */
    {
        static ram_store store;
        unsigned long k;
        bool ok = true;
        for (k = 0; k < 2 * PB_STATE_IMAGE_LEN; k += 7) {
            ram_init(&store, &port);
            store.budget = (long)k;
            (void)pb_box_start(&box, &config, &crypto, &port, issuer, NULL);
            store.budget = -1;
            store.off = false;
            if (pb_box_start(&box, &config, &crypto, &port, NULL, NULL) != PB_OK)
                ok = false;
            /* Either the first image was whole (issuer from the file), or the
             * box is new again and starts from the file it is given now. */
            else if (box.state.box_seq != 0 || box.state.last_control_seq != 0)
                ok = false;
        }
        CHECK(ok, "a first save cut short leaves a new box");
    }

    pb_mbedtls_free(&engine);
    return check_done("persistence");
}
