/* What the decision does beyond the vectors: a full tries table refuses a
 * new key rather than forget a live one, and reuses the slot of a key whose
 * window has passed; box_seq at 0xFFFFFFFF answers nothing; a crypto port
 * that fails answers nothing and leaves the state as it was; a bad config is
 * refused at start. */
#include "check.h"
#include "parkbox.h"
#include "parkbox_mbedtls.h"

#include <string.h>

static pb_crypto_port crypto;
static pb_mbedtls engine;

static const uint8_t PARKING_KEY[16] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                         0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };
#define NOW 1767225660u

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void config_of(pb_box_config *c)
{
    memset(c, 0, sizeof *c);
    c->module_id = 101;
    c->parking_id = 7;
    c->direction = PB_DIRECTION_ENTRANCE;
    c->has_parking_key = true;
    memcpy(c->parking_key, PARKING_KEY, 16);
    memset(c->box_key, 0xA0, 16);
    c->skew_seconds = 120;
    c->min_battery_mv = 3300;
    c->revocation_capacity = 64;
}

/* A sealed ACCESS of key_id for this box, valid from NOW - 600 to not_after. */
static size_t access(uint32_t key_id, uint32_t not_after, uint8_t *frame)
{
    frame[0] = PB_VERSION;
    frame[1] = PB_KIND_ACCESS;
    put32(frame + 2, key_id);
    put32(frame + 6, 7);
    memset(frame + 10, (int)(key_id & 0xFFu), 12);
    put32(frame + 22, NOW - 600);
    put32(frame + 26, not_after);
    frame[30] = 3;
    frame[31] = 3;
    frame[32] = 1;
    put32(frame + 33, 101);
    pb_ccm_seal(&crypto, PARKING_KEY, frame + 10, frame, 22, frame + 22, 15, frame + 37);
    return 45;
}

static int failing_calls;

static bool failing_aes(void *ctx, const uint8_t key[16], const uint8_t in[16], uint8_t out[16])
{
    (void)ctx;
    if (failing_calls-- <= 0)
        return false;
    return crypto.aes128_encrypt(crypto.ctx, key, in, out);
}

static bool same(const pb_box_state *a, const pb_box_state *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

int main(void)
{
    static pb_box_state state, before;
    pb_box_config config;
    pb_conditions now = { NOW, 3700, PB_BARRIER_CLOSED, false };
    pb_decision d;
    uint8_t frame[64], response[PB_RESPONSE_LEN];
    size_t len;
    unsigned i;
    bool all_ok = true;

    if (pb_mbedtls_init(&engine, &crypto) != 0)
        return 2;
    config_of(&config);

    /* Every slot taken by a key still within its window. */
    pb_state_init(&state, NULL, NULL);
    for (i = 0; i < PB_TRIES_CAPACITY; i++) {
        len = access(1000 + i, NOW + 3600, frame);
        if (pb_decide(&config, &crypto, &state, &now, frame, len, &d, response) != PB_OK ||
            d.status != PB_STATUS_OK)
            all_ok = false;
    }
    CHECK(all_ok, "as many keys as the table holds open");
    before = state;
    len = access(5000, NOW + 3600, frame);
    CHECK(pb_decide(&config, &crypto, &state, &now, frame, len, &d, response) == PB_OK &&
              d.status == PB_STATUS_NO_TRIES_LEFT && d.remaining == 0 && d.effect == PB_EFFECT_NONE,
          "one key more is refused NO_TRIES_LEFT: no live key's count is forgotten");
    len = access(1000, NOW + 3600, frame);
    CHECK(pb_decide(&config, &crypto, &state, &now, frame, len, &d, response) == PB_OK &&
              d.status == PB_STATUS_OK && d.remaining == 1,
          "a key already counted still opens, its count kept");

    /* Once a key's window has passed, its slot serves a new key. */
    now.box_time = NOW + 3600 + 121;
    len = access(6000, NOW + 7200, frame);
    CHECK(pb_decide(&config, &crypto, &state, &now, frame, len, &d, response) == PB_OK &&
              d.status == PB_STATUS_OK && d.remaining == 2,
          "a slot past its key's not_after + skew is reused");
    now.box_time = NOW;

    /* box_seq cannot go past 0xFFFFFFFF: nothing is answered, nothing changes. */
    state.box_seq = 0xFFFFFFFFu;
    before = state;
    CHECK(pb_decide(&config, &crypto, &state, &now, frame, len, &d, response) == PB_ERR_EXHAUSTED &&
              same(&state, &before),
          "box_seq exhausted");
    CHECK(pb_status_report(&config, &crypto, &state, &now, response) == PB_ERR_EXHAUSTED &&
              same(&state, &before),
          "box_seq exhausted: no status report either");

    /* A crypto port that fails, at each of its calls in turn. */
    {
        pb_crypto_port broken = crypto;
        int calls;
        bool untouched = true;
        broken.aes128_encrypt = failing_aes;
        pb_state_init(&state, NULL, NULL);
        len = access(7000, NOW + 3600, frame);
        for (calls = 0; calls < 12; calls++) {
            int r;
            before = state;
            failing_calls = calls;
            r = pb_decide(&config, &broken, &state, &now, frame, len, &d, response);
            if (r == PB_OK)
                break;
            if (r != PB_ERR_CRYPTO || !same(&state, &before))
                untouched = false;
        }
        CHECK(untouched, "a failing crypto port: PB_ERR_CRYPTO and the state as it was");
        CHECK(calls < 12 && d.status == PB_STATUS_OK, "and with enough calls the command is decided");
    }

    /* A bad config is refused before anything is read or written. */
    {
        pb_box box;
        pb_store_port none;
        memset(&none, 0, sizeof none);
        config.direction = PB_DIRECTION_CONTROL;
        CHECK(pb_box_start(&box, &config, &crypto, &none, NULL, NULL) == PB_ERR_ARGUMENT, "direction 0");
        config_of(&config);
        config.revocation_capacity = PB_REVOCATION_CAPACITY + 1;
        CHECK(pb_box_start(&box, &config, &crypto, &none, NULL, NULL) == PB_ERR_ARGUMENT,
              "a revocation capacity above the build's");
    }

    pb_mbedtls_free(&engine);
    return check_done("decide");
}
