/* Every vector of firmware-protocol/test-vectors.json (the path is argv[1]),
 * both ways where the box has both ways (docs/implementing-a-box.md,
 * Checking against the test vectors): CRC-16; commands sealed from their
 * fields give their bytes and open back to them (and every flipped bit is
 * refused); signed commands verify, parse, and a frame signed here from the
 * same fields verifies too; responses sealed from their fields give their
 * bytes; link frames and BLE chunks encode and decode; and every decision
 * gives its status, its response byte for byte and its state. */
#include "check.h"
#include "command.h"
#include "json.h"
#include "parkbox.h"
#include "parkbox_mbedtls.h"

#include <mbedtls/ecdsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pb_crypto_port crypto;
static pb_mbedtls engine;

#define BUF 512

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t u32_of(const json *o, const char *key)
{
    uint32_t v = 0;
    if (!json_u32(o, key, &v)) {
        fprintf(stderr, "vector field %s missing\n", key);
        exit(2);
    }
    return v;
}

static size_t hex_of(const json *o, const char *key, uint8_t *out, size_t cap)
{
    size_t n = 0;
    const char *s = json_str(o, key);
    if (s == NULL || !hex_decode_any(s, out, cap, &n)) {
        fprintf(stderr, "vector field %s is not hex\n", key);
        exit(2);
    }
    return n;
}

/* The plaintext body of docs/protocol.md, Command frame, from a vector's
 * fields. */
static size_t encode_body(uint8_t kind, const json *body, uint8_t *out)
{
    size_t n = 0, i;
    if (kind == PB_KIND_ACCESS || kind == PB_KIND_ACCESS_SIGNED) {
        const json *modules = json_get(body, "module_ids");
        put32(out, u32_of(body, "not_before"));
        put32(out + 4, u32_of(body, "not_after"));
        out[8] = (uint8_t)u32_of(body, "max_entries");
        out[9] = (uint8_t)u32_of(body, "max_exits");
        out[10] = (uint8_t)modules->count;
        for (i = 0; i < modules->count; i++)
            put32(out + 11 + 4 * i, (uint32_t)json_at(modules, i)->number);
        n = 11 + 4 * modules->count;
    } else if (kind == PB_KIND_TIME_SET) {
        put32(out, u32_of(body, "time"));
        n = 4;
    } else if (kind == PB_KIND_REVOKE) {
        const json *entries = json_get(body, "entries");
        out[0] = (uint8_t)entries->count;
        for (i = 0; i < entries->count; i++) {
            put32(out + 1 + 8 * i, u32_of(json_at(entries, i), "key_id"));
            put32(out + 5 + 8 * i, u32_of(json_at(entries, i), "until"));
        }
        n = 1 + 8 * entries->count;
    } else if (kind == PB_KIND_SET_ISSUER) {
        hex_of(body, "issuer_key", out, 64);
        if (json_str(body, "issuer_key_previous") != NULL)
            hex_of(body, "issuer_key_previous", out + 64, 64);
        else
            memset(out + 64, 0, 64);
        n = 128;
    }
    return n;
}

static void header_of(const json *v, uint8_t *frame)
{
    frame[0] = PB_VERSION;
    frame[1] = (uint8_t)u32_of(v, "kind");
    put32(frame + 2, u32_of(v, "key_id"));
    put32(frame + 6, u32_of(v, "scope"));
    hex_of(v, "nonce", frame + 10, 12);
}

static void test_crc16(const json *vectors)
{
    const json *list = json_get(vectors, "crc16");
    size_t i;
    for (i = 0; i < list->count; i++) {
        const json *v = json_at(list, i);
        const char *input = json_str(v, "input_ascii");
        uint8_t crc[2];
        hex_of(v, "crc", crc, 2);
        CHECK(pb_crc16((const uint8_t *)input, strlen(input)) == (uint16_t)((crc[0] << 8) | crc[1]),
              json_str(v, "name"));
    }
}

/* The body parsers of step 5 read back what encode_body wrote. */
static void check_body_parses(uint8_t kind, const uint8_t *body, size_t n, const json *fields,
                              const char *name)
{
    if (kind == PB_KIND_ACCESS || kind == PB_KIND_ACCESS_SIGNED) {
        pb_access_body a;
        const json *modules = json_get(fields, "module_ids");
        size_t i;
        bool modules_ok = true;
        if (!CHECK(pb_parse_access_body(body, n, &a), name))
            return;
        CHECK(a.not_before == u32_of(fields, "not_before"), name);
        CHECK(a.not_after == u32_of(fields, "not_after"), name);
        CHECK(a.max_entries == u32_of(fields, "max_entries"), name);
        CHECK(a.max_exits == u32_of(fields, "max_exits"), name);
        CHECK(a.module_count == modules->count, name);
        for (i = 0; i < modules->count && i < a.module_count; i++)
            modules_ok = modules_ok && pb_access_lists_module(&a, (uint32_t)json_at(modules, i)->number);
        CHECK(modules_ok, name);
    } else if (kind == PB_KIND_REVOKE) {
        pb_revoke_body r;
        CHECK(pb_parse_revoke_body(body, n, &r) && r.count == json_get(fields, "entries")->count, name);
    } else if (kind == PB_KIND_SET_ISSUER) {
        CHECK(pb_check_set_issuer_body(&crypto, body, n), name);
    } else if (kind == PB_KIND_TIME_SET) {
        CHECK(n == 4, name);
    } else {
        CHECK(n == 0, name);
    }
}

static void test_commands(const json *vectors)
{
    const json *list = json_get(vectors, "commands");
    size_t i;
    for (i = 0; i < list->count; i++) {
        const json *v = json_at(list, i);
        const char *name = json_str(v, "name");
        uint8_t key[16], expected[BUF], frame[BUF], body[BUF], opened[BUF];
        size_t n, len;
        size_t bit;
        bool every_flip_refused = true;
        pb_header h;
        uint8_t kind = (uint8_t)u32_of(v, "kind");

        hex_of(v, "key", key, 16);
        len = hex_of(v, "bytes", expected, BUF);
        header_of(v, frame);
        n = encode_body(kind, json_get(v, "body"), body);
        memcpy(frame + 22, body, n);
        /* Sealing the fields gives the bytes. */
        CHECK(pb_ccm_seal(&crypto, key, frame + 10, frame, 22, frame + 22, n, frame + 22 + n) == PB_OK,
              name);
        CHECK(22 + n + 8 == len && memcmp(frame, expected, len) == 0, name);
        /* Opening the bytes gives the fields. */
        CHECK(pb_parse_header(expected, len, &h) == PB_STATUS_OK && h.kind == kind &&
                  h.key_id == u32_of(v, "key_id") && h.scope == u32_of(v, "scope"),
              name);
        CHECK(pb_ccm_open(&crypto, key, expected + 10, expected, 22, expected + 22, n, opened,
                          expected + 22 + n) == PB_OK &&
                  memcmp(opened, body, n) == 0,
              name);
        check_body_parses(kind, opened, n, json_get(v, "body"), name);
        /* A forged tag, or any flipped bit of the frame, is refused. */
        for (bit = 0; bit < len * 8; bit++) {
            memcpy(frame, expected, len);
            frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            if (pb_ccm_open(&crypto, key, frame + 10, frame, 22, frame + 22, n, opened,
                            frame + 22 + n) != 1)
                every_flip_refused = false;
        }
        CHECK(every_flip_refused, name);
    }
}

/* Signs `frame` (len bytes before the signature) with a vector issuer's
 * private key, as the service does. */
static bool sign(const uint8_t private_key[32], const uint8_t *frame, size_t len, uint8_t sig[64])
{
    mbedtls_mpi d, r, s;
    uint8_t digest[32];
    bool ok;
    mbedtls_mpi_init(&d);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    ok = crypto.sha256(crypto.ctx, frame, len, digest) &&
         mbedtls_mpi_read_binary(&d, private_key, 32) == 0 &&
         mbedtls_ecdsa_sign(&engine.p256, &r, &s, &d, digest, 32, mbedtls_ctr_drbg_random,
                            &engine.drbg) == 0 &&
         mbedtls_mpi_write_binary(&r, sig, 32) == 0 && mbedtls_mpi_write_binary(&s, sig + 32, 32) == 0;
    mbedtls_mpi_free(&d);
    mbedtls_mpi_free(&r);
    mbedtls_mpi_free(&s);
    return ok;
}

static void test_signed_commands(const json *vectors)
{
    const json *list = json_get(vectors, "signed_commands");
    const json *issuers = json_get(vectors, "issuers");
    size_t i;
    for (i = 0; i < list->count; i++) {
        const json *v = json_at(list, i);
        const char *name = json_str(v, "name");
        const json *issuer = json_at(issuers, u32_of(v, "issuer"));
        uint8_t public_key[64], private_key[32], other_key[64];
        uint8_t expected[BUF], frame[BUF], digest[32];
        size_t n, len;
        pb_header h;
        uint8_t kind = (uint8_t)u32_of(v, "kind");

        hex_of(issuer, "public_key", public_key, 64);
        hex_of(issuer, "private_key", private_key, 32);
        hex_of(json_at(issuers, 1 - u32_of(v, "issuer")), "public_key", other_key, 64);
        len = hex_of(v, "bytes", expected, BUF);
        CHECK(crypto.p256_point_valid(crypto.ctx, public_key), name);
        /* The bytes verify under the issuer's key, and no other. */
        CHECK(crypto.sha256(crypto.ctx, expected, len - 64, digest) &&
                  crypto.p256_verify(crypto.ctx, public_key, digest, expected + len - 64),
              name);
        CHECK(!crypto.p256_verify(crypto.ctx, other_key, digest, expected + len - 64), name);
        /* They parse to the vector's fields. */
        CHECK(pb_parse_header(expected, len, &h) == PB_STATUS_OK && h.kind == kind &&
                  h.key_id == u32_of(v, "key_id") && h.scope == u32_of(v, "scope"),
              name);
        header_of(v, frame);
        n = encode_body(kind, json_get(v, "body"), frame + 22);
        CHECK(22 + n + 64 == len && memcmp(frame, expected, 22 + n) == 0, name);
        check_body_parses(kind, expected + 22, n, json_get(v, "body"), name);
        /* A frame signed here from the same fields verifies too, and differs
         * only in the signature. */
        CHECK(sign(private_key, frame, 22 + n, frame + 22 + n), name);
        CHECK(crypto.sha256(crypto.ctx, frame, 22 + n, digest) &&
                  crypto.p256_verify(crypto.ctx, public_key, digest, frame + 22 + n),
              name);
        CHECK(memcmp(frame, expected, 22 + n) == 0 && memcmp(frame + 22 + n, expected + 22 + n, 64) != 0,
              name);
    }
}

static void test_responses(const json *vectors)
{
    const json *list = json_get(vectors, "responses");
    size_t i;
    for (i = 0; i < list->count; i++) {
        const json *v = json_at(list, i);
        const json *f = json_get(v, "fields");
        const char *name = json_str(v, "name");
        uint8_t key[16], expected[BUF], command[22], out[PB_RESPONSE_LEN];
        pb_response_fields fields;
        size_t len;

        hex_of(v, "box_key", key, 16);
        len = hex_of(v, "bytes", expected, BUF);
        memset(command, 0, sizeof command);
        hex_of(v, "command_nonce", command + 10, 12);
        fields.status = (uint8_t)u32_of(f, "status");
        fields.kind = (uint8_t)u32_of(f, "kind");
        fields.module_id = u32_of(f, "module_id");
        fields.key_id = u32_of(f, "key_id");
        fields.box_seq = u32_of(f, "box_seq");
        fields.box_time = u32_of(f, "box_time");
        fields.battery_mv = (uint16_t)u32_of(f, "battery_mv");
        fields.barrier = (uint8_t)u32_of(f, "barrier");
        fields.direction = (uint8_t)u32_of(f, "direction");
        fields.remaining = (uint8_t)u32_of(f, "remaining");
        CHECK(pb_response_seal(&crypto, key, &fields, command, sizeof command, out) == PB_OK, name);
        if (!CHECK(len == PB_RESPONSE_LEN && memcmp(out, expected, len) == 0, name)) {
            hex_print("got", out, PB_RESPONSE_LEN);
            hex_print("want", expected, len);
        }
        /* A zero nonce is what a status report binds to: NULL gives it too. */
        if (memcmp(command + 10, "\0\0\0\0\0\0\0\0\0\0\0\0", 12) == 0) {
            CHECK(pb_response_seal(&crypto, key, &fields, NULL, 0, out) == PB_OK &&
                      memcmp(out, expected, len) == 0,
                  name);
        }
    }
}

static void test_link_frames(const json *vectors)
{
    const json *list = json_get(vectors, "link_frames");
    size_t i;
    for (i = 0; i < list->count; i++) {
        const json *v = json_at(list, i);
        const char *name = json_str(v, "name");
        uint8_t payload[BUF], expected[BUF], out[BUF];
        size_t plen = hex_of(v, "payload", payload, BUF);
        size_t len = hex_of(v, "bytes", expected, BUF);
        size_t n = pb_link_encode((uint8_t)u32_of(v, "type"), payload, plen, out, sizeof out);
        pb_frame_decoder d;
        unsigned frames = 0;
        size_t j;

        CHECK(n == len && memcmp(out, expected, len) == 0, name);
        pb_frame_decoder_init(&d);
        for (j = 0; j < len; j++) {
            uint8_t type;
            const uint8_t *p;
            size_t plen2;
            if (pb_frame_decoder_push(&d, expected[j], &type, &p, &plen2)) {
                frames++;
                CHECK(j == len - 1 && type == u32_of(v, "type") && plen2 == plen &&
                          memcmp(p, payload, plen) == 0,
                      name);
            }
        }
        CHECK(frames == 1, name);
    }
}

static void test_ble_chunks(const json *vectors)
{
    const json *list = json_get(vectors, "ble_chunks");
    size_t i;
    for (i = 0; i < list->count; i++) {
        const json *v = json_at(list, i);
        const char *name = json_str(v, "name");
        const json *chunks = json_get(v, "chunks");
        uint8_t frame[BUF], chunk[BUF], out[BUF];
        size_t len = hex_of(v, "frame", frame, BUF);
        uint16_t mtu = (uint16_t)u32_of(v, "mtu");
        pb_ble_reassembler r;
        unsigned j, frames = 0;

        pb_ble_reassembler_init(&r);
        CHECK(pb_ble_chunk_count(len, mtu) == chunks->count, name);
        for (j = 0; j < chunks->count; j++) {
            size_t clen = 0, n;
            const uint8_t *got;
            size_t got_len;
            hex_decode_any(json_at(chunks, j)->string, chunk, sizeof chunk, &clen);
            n = pb_ble_chunk(frame, len, mtu, j, out);
            CHECK(n == clen && memcmp(out, chunk, clen) == 0, name);
            if (pb_ble_push(&r, chunk, clen, &got, &got_len)) {
                frames++;
                CHECK(j == chunks->count - 1 && got_len == len && memcmp(got, frame, len) == 0, name);
            }
        }
        CHECK(frames == 1, name);
    }
}

/* ---- decisions ---- */

static int by_key_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* A list as sorted (key_id, value, count) triples, for comparing as sets. */
typedef struct triple {
    uint32_t key_id, value, count;
} triple;

static size_t tries_of_state(const pb_box_state *s, triple *out)
{
    size_t n = 0, i;
    for (i = 0; i < PB_TRIES_CAPACITY; i++)
        if (s->tries[i].count > 0) {
            out[n].key_id = s->tries[i].key_id;
            out[n].value = s->tries[i].not_after;
            out[n].count = s->tries[i].count;
            n++;
        }
    qsort(out, n, sizeof *out, by_key_id);
    return n;
}

static size_t revocations_of_state(const pb_box_state *s, triple *out)
{
    size_t i;
    for (i = 0; i < s->revocation_count; i++) {
        out[i].key_id = s->revocations[i].key_id;
        out[i].value = s->revocations[i].until;
        out[i].count = 0;
    }
    qsort(out, s->revocation_count, sizeof *out, by_key_id);
    return s->revocation_count;
}

static size_t triples_of_json(const json *list, const char *value, bool count, triple *out)
{
    size_t i;
    for (i = 0; i < list->count; i++) {
        out[i].key_id = u32_of(json_at(list, i), "key_id");
        out[i].value = u32_of(json_at(list, i), value);
        out[i].count = count ? u32_of(json_at(list, i), "count") : 0;
    }
    qsort(out, list->count, sizeof *out, by_key_id);
    return list->count;
}

static bool optional_key(const json *o, const char *key, bool *has, uint8_t out[64])
{
    const char *s = json_str(o, key);
    *has = s != NULL;
    memset(out, 0, 64);
    return s == NULL || hex_decode(s, out, 64);
}

static void state_of_json(const json *j, pb_box_state *s)
{
    const json *tries = json_get(j, "tries");
    const json *revocations = json_get(j, "revocations");
    size_t i;
    memset(s, 0, sizeof *s);
    s->box_seq = u32_of(j, "box_seq");
    s->last_control_seq = u32_of(j, "last_control_seq");
    optional_key(j, "issuer_key", &s->has_issuer_key, s->issuer_key);
    optional_key(j, "issuer_key_previous", &s->has_issuer_key_previous, s->issuer_key_previous);
    if (tries->count > PB_TRIES_CAPACITY || revocations->count > PB_REVOCATION_CAPACITY) {
        fprintf(stderr, "a decision's state does not fit the build's capacities\n");
        exit(2);
    }
    for (i = 0; i < tries->count; i++) {
        s->tries[i].key_id = u32_of(json_at(tries, i), "key_id");
        s->tries[i].not_after = u32_of(json_at(tries, i), "not_after");
        s->tries[i].count = (uint8_t)u32_of(json_at(tries, i), "count");
    }
    for (i = 0; i < revocations->count; i++) {
        s->revocations[i].key_id = u32_of(json_at(revocations, i), "key_id");
        s->revocations[i].until = u32_of(json_at(revocations, i), "until");
    }
    s->revocation_count = (uint16_t)revocations->count;
}

static void config_of_json(const json *j, pb_box_config *c)
{
    const char *direction = json_str(j, "direction");
    uint8_t unused[64];
    memset(c, 0, sizeof *c);
    c->module_id = u32_of(j, "module_id");
    c->parking_id = u32_of(j, "parking_id");
    c->direction = strcmp(direction, "entrance") == 0 ? PB_DIRECTION_ENTRANCE : PB_DIRECTION_EXIT;
    c->has_parking_key = json_str(j, "parking_key") != NULL;
    if (c->has_parking_key)
        hex_of(j, "parking_key", c->parking_key, 16);
    c->has_parking_key_next = json_str(j, "parking_key_next") != NULL;
    if (c->has_parking_key_next)
        hex_of(j, "parking_key_next", c->parking_key_next, 16);
    hex_of(j, "box_key", c->box_key, 16);
    c->skew_seconds = u32_of(j, "skew_seconds");
    c->min_battery_mv = (uint16_t)u32_of(j, "min_battery_mv");
    c->revocation_capacity = (uint16_t)u32_of(j, "revocation_capacity");
    (void)unused;
}

static bool same_triples(const triple *a, size_t na, const triple *b, size_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

static void test_decisions(const json *vectors)
{
    const json *list = json_get(vectors, "decisions");
    static triple got[PB_REVOCATION_CAPACITY + PB_TRIES_CAPACITY], want[PB_REVOCATION_CAPACITY + PB_TRIES_CAPACITY];
    size_t i;
    for (i = 0; i < list->count; i++) {
        const json *v = json_at(list, i);
        const json *expected = json_get(v, "expected");
        const json *want_state = json_get(expected, "state");
        const json *cond = json_get(v, "conditions");
        const char *name = json_str(v, "name");
        pb_box_config config;
        pb_box_state state, after;
        pb_conditions conditions;
        pb_decision decision;
        uint8_t command[BUF], response[PB_RESPONSE_LEN], want_response[PB_RESPONSE_LEN];
        size_t len = hex_of(v, "command", command, BUF), ng, nw;
        bool has;
        uint8_t key[64];

        config_of_json(json_get(v, "config"), &config);
        state_of_json(json_get(v, "state"), &state);
        conditions.box_time = u32_of(cond, "box_time");
        conditions.battery_mv = (uint16_t)u32_of(cond, "battery_mv");
        conditions.barrier = (uint8_t)u32_of(cond, "barrier");
        conditions.jammed = json_get(cond, "jammed")->boolean;
        hex_of(expected, "response", want_response, PB_RESPONSE_LEN);

        if (!CHECK(pb_decide(&config, &crypto, &state, &conditions, command, len, &decision, response) ==
                       PB_OK,
                   name))
            continue;
        if (!CHECK(decision.status == u32_of(expected, "status"), name))
            fprintf(stderr, "  status 0x%02x, want 0x%02x\n", decision.status, u32_of(expected, "status"));
        if (!CHECK(memcmp(response, want_response, PB_RESPONSE_LEN) == 0, name)) {
            hex_print("got", response, PB_RESPONSE_LEN);
            hex_print("want", want_response, PB_RESPONSE_LEN);
        }
        state_of_json(want_state, &after);
        CHECK(state.box_seq == after.box_seq, name);
        CHECK(state.last_control_seq == after.last_control_seq, name);
        optional_key(want_state, "issuer_key", &has, key);
        CHECK(state.has_issuer_key == has && (!has || memcmp(state.issuer_key, key, 64) == 0), name);
        optional_key(want_state, "issuer_key_previous", &has, key);
        CHECK(state.has_issuer_key_previous == has &&
                  (!has || memcmp(state.issuer_key_previous, key, 64) == 0),
              name);
        ng = tries_of_state(&state, got);
        nw = triples_of_json(json_get(want_state, "tries"), "not_after", true, want);
        CHECK(same_triples(got, ng, want, nw), name);
        ng = revocations_of_state(&state, got);
        nw = triples_of_json(json_get(want_state, "revocations"), "until", false, want);
        CHECK(same_triples(got, ng, want, nw), name);
    }
}

int main(int argc, char **argv)
{
    const char *error = NULL;
    json *vectors;
    unsigned before;

    if (argc != 2) {
        fprintf(stderr, "usage: test_vectors PATH/test-vectors.json\n");
        return 2;
    }
    vectors = json_parse_file(argv[1], &error);
    if (vectors == NULL) {
        fprintf(stderr, "%s: %s\n", argv[1], error);
        return 2;
    }
    if (pb_mbedtls_init(&engine, &crypto) != 0) {
        fprintf(stderr, "mbed TLS did not start\n");
        return 2;
    }
    CHECK(u32_of(vectors, "version") == 2, "the vectors are version 2");
#define SECTION(fn, key)                                                                  \
    before = check_count;                                                                 \
    fn(vectors);                                                                          \
    printf("  %-16s %3zu vectors, %5u checks\n", key, json_get(vectors, key)->count,     \
           check_count - before);
    SECTION(test_crc16, "crc16")
    SECTION(test_commands, "commands")
    SECTION(test_signed_commands, "signed_commands")
    SECTION(test_responses, "responses")
    SECTION(test_link_frames, "link_frames")
    SECTION(test_ble_chunks, "ble_chunks")
    SECTION(test_decisions, "decisions")
    pb_mbedtls_free(&engine);
    json_free(vectors);
    return check_done("vectors");
}
