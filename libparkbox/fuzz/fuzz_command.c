/* libFuzzer target: the command path, pb_decide on any bytes. The first
 * input byte picks the box's conditions and state (direction, battery,
 * jammed, a full revocation list, a used key) and the crypto port: mbed TLS,
 * or a port that lets the fuzzer past step 4 (AES gives zeros, so a sealed
 * frame whose tag is 8 zero bytes verifies and its body travels in the
 * clear; a signature verifies when its first byte is even; a point is valid
 * when its first byte is not 0xFF). Checked: a decision always, a status of
 * the protocol's table, box_seq up by one, the lists within their bounds. */
#include "parkbox.h"
#include "parkbox_mbedtls.h"

#include <stdlib.h>
#include <string.h>

static void check(int ok)
{
    if (!ok)
        abort();
}

static bool zero_aes(void *ctx, const uint8_t key[16], const uint8_t in[16], uint8_t out[16])
{
    (void)ctx;
    (void)key;
    (void)in;
    memset(out, 0, 16);
    return true;
}

static bool any_sha256(void *ctx, const uint8_t *data, size_t len, uint8_t digest[32])
{
    (void)ctx;
    memset(digest, 0, 32);
    if (len > 0)
        digest[0] = data[len - 1];
    return true;
}

static bool even_verify(void *ctx, const uint8_t key[64], const uint8_t digest[32], const uint8_t sig[64])
{
    (void)ctx;
    (void)key;
    (void)digest;
    return (sig[0] & 1u) == 0;
}

static bool point_valid(void *ctx, const uint8_t key[64])
{
    (void)ctx;
    return key[0] != 0xFF;
}

static bool no_random(void *ctx, uint8_t *out, size_t len)
{
    (void)ctx;
    memset(out, 0, len);
    return true;
}

static bool known_status(uint8_t s)
{
    switch (s) {
    case PB_STATUS_OK: case PB_STATUS_NOT_YET_VALID: case PB_STATUS_EXPIRED:
    case PB_STATUS_NO_TRIES_LEFT: case PB_STATUS_WRONG_MODULE: case PB_STATUS_WRONG_PARKING:
    case PB_STATUS_REPLAY: case PB_STATUS_REVOKED: case PB_STATUS_AUTH_FAILED:
    case PB_STATUS_MALFORMED: case PB_STATUS_UNSUPPORTED_VERSION: case PB_STATUS_BARRIER_FAULT:
    case PB_STATUS_LOW_BATTERY: case PB_STATUS_REVOCATION_FULL:
        return true;
    default:
        return false;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pb_mbedtls engine;
    static pb_crypto_port real;
    static bool started;
    static const pb_crypto_port permissive = { NULL, zero_aes, any_sha256, even_verify, point_valid, no_random };
    static pb_box_state state;
    pb_box_config config;
    pb_conditions conditions;
    pb_decision d;
    uint8_t response[PB_RESPONSE_LEN];
    uint8_t mode;
    unsigned i;

    if (!started) {
        check(pb_mbedtls_init(&engine, &real) == 0);
        started = true;
    }
    if (size == 0)
        return 0;
    mode = data[0];
    data++;
    size--;

    memset(&config, 0, sizeof config);
    config.module_id = 0x65;
    config.parking_id = 7;
    config.direction = (mode & 1u) ? PB_DIRECTION_EXIT : PB_DIRECTION_ENTRANCE;
    config.has_parking_key = (mode & 2u) != 0;
    config.has_parking_key_next = true;
    memset(config.box_key, 0xA0, 16);
    config.skew_seconds = (mode & 4u) ? 0xFFFFFFFFu : 120u;
    config.min_battery_mv = 3300;
    config.revocation_capacity = (mode & 8u) ? 2u : PB_REVOCATION_CAPACITY;

    memset(response, 0, sizeof response);
    pb_state_init(&state, NULL, NULL);
    state.box_seq = 10;
    state.last_control_seq = 5;
    state.has_issuer_key = (mode & 16u) != 0;
    state.has_issuer_key_previous = true;
    if (mode & 32u) {
        /* A full list and a used key. */
        for (i = 0; i < config.revocation_capacity; i++) {
            state.revocations[i].key_id = 40u + i;
            state.revocations[i].until = (i & 1u) ? 0u : 0xFFFFFFF0u;
        }
        state.revocation_count = (uint16_t)config.revocation_capacity;
        for (i = 0; i < PB_TRIES_CAPACITY; i++) {
            state.tries[i].key_id = 42u + i;
            state.tries[i].count = (uint8_t)(1u + i);
            state.tries[i].not_after = (i & 1u) ? 0u : 0xFFFFFFFFu;
        }
    }
    conditions.box_time = (mode & 64u) ? 0xFFFFFFFFu : 1767225660u;
    conditions.battery_mv = (mode & 2u) ? 3000 : 3700;
    conditions.barrier = (uint8_t)(mode % 5u);
    conditions.jammed = (mode & 4u) != 0;

    check(pb_decide(&config, (mode & 128u) ? &real : &permissive, &state, &conditions, data, size, &d,
                    response) == PB_OK);
    check(known_status(d.status));
    check(state.box_seq == 11);
    check(response[0] == PB_VERSION && response[1] == d.status);
    check(state.revocation_count <= config.revocation_capacity);
    if (d.kind == PB_KIND_NONE)
        check(d.key_id == 0 && d.remaining == PB_REMAINING_NOT_APPLICABLE);
    if (d.status == PB_STATUS_OK && (d.kind == PB_KIND_ACCESS || d.kind == PB_KIND_ACCESS_SIGNED))
        check(d.effect == PB_EFFECT_OPEN);
    if (d.effect == PB_EFFECT_OPEN)
        check(d.status == PB_STATUS_OK);
    return 0;
}
