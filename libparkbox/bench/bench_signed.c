/* How long the box takes to decide an ACCESS_SIGNED (SHA-256, the point read
 * and checked, the signature verified, steps 5 to 11, the response sealed)
 * against mbed TLS's bare verify of the same signature (point and digest
 * ready, mbedtls_ecdsa_verify alone). Prints both and their ratio.
 *   bench_signed [ITERATIONS]     (a round, default 50; 10 rounds) */
#define _POSIX_C_SOURCE 200809L
#include "parkbox.h"
#include "parkbox_mbedtls.h"

#include <mbedtls/ecdsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 10

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

int main(int argc, char **argv)
{
    static pb_mbedtls engine;
    pb_crypto_port crypto;
    mbedtls_ecdsa_context key;
    mbedtls_mpi r, s;
    uint8_t public_key[65], frame[PB_COMMAND_MAX], digest[32], response[PB_RESPONSE_LEN];
    size_t olen, len;
    pb_box_config config;
    pb_box_state state, fresh;
    pb_conditions conditions = { 1767225660u, 3700, PB_BARRIER_CLOSED, false };
    pb_decision d;
    int i, round, n = argc > 1 ? atoi(argv[1]) : 50;
    double t0, bare, full;

    if (n <= 0 || pb_mbedtls_init(&engine, &crypto) != 0)
        return 2;
    mbedtls_ecdsa_init(&key);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    if (mbedtls_ecdsa_genkey(&key, MBEDTLS_ECP_DP_SECP256R1, mbedtls_ctr_drbg_random, &engine.drbg) != 0 ||
        mbedtls_ecp_point_write_binary(&key.grp, &key.Q, MBEDTLS_ECP_PF_UNCOMPRESSED, &olen, public_key,
                                       sizeof public_key) != 0)
        return 2;

    /* An ACCESS_SIGNED of 32 modules, this box the last (the longest frame). */
    frame[0] = PB_VERSION;
    frame[1] = PB_KIND_ACCESS_SIGNED;
    put32(frame + 2, 42);
    put32(frame + 6, 7);
    memset(frame + 10, 0x5a, 12);
    put32(frame + 22, conditions.box_time - 60);
    put32(frame + 26, conditions.box_time + 3600);
    frame[30] = 255;
    frame[31] = 255;
    frame[32] = 32;
    for (i = 0; i < 32; i++)
        put32(frame + 33 + 4 * i, 70 + (uint32_t)i);
    len = 33 + 4 * 32;
    crypto.sha256(crypto.ctx, frame, len, digest);
    if (mbedtls_ecdsa_sign(&key.grp, &r, &s, &key.d, digest, 32, mbedtls_ctr_drbg_random, &engine.drbg) != 0)
        return 2;
    mbedtls_mpi_write_binary(&r, frame + len, 32);
    mbedtls_mpi_write_binary(&s, frame + len + 32, 32);
    len += 64;

    memset(&config, 0, sizeof config);
    config.module_id = 101;
    config.parking_id = 7;
    config.direction = PB_DIRECTION_ENTRANCE;
    config.skew_seconds = 120;
    config.min_battery_mv = 3300;
    config.revocation_capacity = 64;
    pb_state_init(&fresh, public_key + 1, NULL);

    /* Warm up, and check the path ends in OK. */
    state = fresh;
    if (pb_decide(&config, &crypto, &state, &conditions, frame, len, &d, response) != PB_OK ||
        d.status != PB_STATUS_OK) {
        fprintf(stderr, "bench_signed: the ACCESS_SIGNED was not accepted (0x%02x)\n", d.status);
        return 1;
    }

    /* Rounds of each in turn; the fastest round of each counts, so a busy
     * neighbour on a shared machine weighs on neither. */
    bare = full = 1e9;
    for (round = 0; round < ROUNDS; round++) {
        double b, f;
        t0 = now_s();
        for (i = 0; i < n; i++)
            if (mbedtls_ecdsa_verify(&key.grp, digest, 32, &key.Q, &r, &s) != 0)
                return 1;
        b = (now_s() - t0) / n;
        t0 = now_s();
        for (i = 0; i < n; i++) {
            state = fresh;
            if (pb_decide(&config, &crypto, &state, &conditions, frame, len, &d, response) != PB_OK ||
                d.status != PB_STATUS_OK)
                return 1;
        }
        f = (now_s() - t0) / n;
        bare = b < bare ? b : bare;
        full = f < full ? f : full;
    }

    printf("mbed TLS bare verify:          %8.1f us\n", bare * 1e6);
    printf("libparkbox ACCESS_SIGNED (OK): %8.1f us\n", full * 1e6);
    printf("ratio:                         %8.3f\n", full / bare);
    mbedtls_mpi_free(&r);
    mbedtls_mpi_free(&s);
    mbedtls_ecdsa_free(&key);
    pb_mbedtls_free(&engine);
    return 0;
}
