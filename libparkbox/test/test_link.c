/* The link layer beyond the vectors: the serial decoder's checklist (a frame
 * split anywhere, two frames at once, junk before a frame, a bad CRC, bad
 * COBS, an oversize run, idle line, an unknown type), COBS round trips, the
 * BLE reassembler's errors, and CCM's empty-plaintext trap. */
#include "check.h"
#include "parkbox.h"
#include "parkbox_mbedtls.h"

#include <string.h>

static pb_crypto_port crypto;
static pb_mbedtls engine;

/* Feeds bytes; returns how many frames came out, the last in *type/out. */
static unsigned feed(pb_frame_decoder *d, const uint8_t *bytes, size_t len, uint8_t *type,
                     uint8_t *out, size_t *out_len)
{
    unsigned frames = 0;
    size_t i;
    for (i = 0; i < len; i++) {
        const uint8_t *p;
        size_t n;
        if (pb_frame_decoder_push(d, bytes[i], type, &p, &n)) {
            frames++;
            memcpy(out, p, n);
            *out_len = n;
        }
    }
    return frames;
}

static void test_decoder(void)
{
    pb_frame_decoder d;
    uint8_t payload[PB_LINK_PAYLOAD_MAX], frame[PB_LINK_FRAME_MAX], two[2 * PB_LINK_FRAME_MAX];
    uint8_t out[PB_LINK_PAYLOAD_MAX], type = 0;
    size_t n, out_len = 0, i;
    uint8_t junk[300];

    for (i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7u); /* zeros included */
    n = pb_link_encode(PB_LINK_COMMAND, payload, sizeof payload, frame, sizeof frame);
    CHECK(n > 0 && n <= PB_LINK_FRAME_MAX, "the longest payload fits a link frame");
    CHECK(pb_link_encode(PB_LINK_COMMAND, payload, sizeof payload + 1, frame, sizeof frame) == 0,
          "a longer payload is refused");
    n = pb_link_encode(PB_LINK_COMMAND, payload, sizeof payload, frame, sizeof frame);

    /* Two frames in one run, and a status request (empty payload). */
    pb_frame_decoder_init(&d);
    memcpy(two, frame, n);
    memcpy(two + n, frame, n);
    CHECK(feed(&d, two, 2 * n, &type, out, &out_len) == 2 && out_len == sizeof payload &&
              memcmp(out, payload, out_len) == 0,
          "two frames back to back");
    n = pb_link_encode(PB_LINK_STATUS_REQUEST, NULL, 0, frame, sizeof frame);
    CHECK(feed(&d, frame, n, &type, out, &out_len) == 1 && type == PB_LINK_STATUS_REQUEST && out_len == 0,
          "a status request");

    /* Idle line: empty runs are not errors. */
    pb_frame_decoder_init(&d);
    memset(junk, 0, 10);
    CHECK(feed(&d, junk, 10, &type, out, &out_len) == 0 && d.counters.bad_cobs == 0 &&
              d.counters.bad_crc == 0,
          "0x00 0x00 is idle line");

    /* Junk ended by a delimiter costs only itself. */
    pb_frame_decoder_init(&d);
    junk[0] = 0x05;
    junk[1] = 0x11;
    junk[2] = 0x22;
    junk[3] = 0x00;
    n = pb_link_encode(PB_LINK_STATUS_REQUEST, NULL, 0, frame, sizeof frame);
    memcpy(junk + 4, frame, n);
    CHECK(feed(&d, junk, 4 + n, &type, out, &out_len) == 1 && d.counters.bad_cobs == 1,
          "junk before a frame is dropped and counted, the frame passes");

    /* A bad CRC. */
    pb_frame_decoder_init(&d);
    n = pb_link_encode(PB_LINK_COMMAND, payload, 40, frame, sizeof frame);
    frame[5] ^= 0x01;
    if (frame[5] == 0)
        frame[5] = 0x02;
    CHECK(feed(&d, frame, n, &type, out, &out_len) == 0 && d.counters.bad_crc == 1, "a bad CRC is counted");

    /* An unknown type with a good CRC. */
    pb_frame_decoder_init(&d);
    n = pb_link_encode(0x7F, payload, 4, frame, sizeof frame);
    CHECK(feed(&d, frame, n, &type, out, &out_len) == 0 && d.counters.unknown_type == 1,
          "an unknown type is counted");

    /* Too short to hold a type and a CRC. */
    pb_frame_decoder_init(&d);
    junk[0] = 0x02;
    junk[1] = 0x01;
    junk[2] = 0x00;
    CHECK(feed(&d, junk, 3, &type, out, &out_len) == 0 && d.counters.bad_crc == 1, "a 1-byte frame");

    /* Bad COBS: a code that runs past the end. */
    pb_frame_decoder_init(&d);
    junk[0] = 0x09;
    junk[1] = 0x01;
    junk[2] = 0x00;
    CHECK(feed(&d, junk, 3, &type, out, &out_len) == 0 && d.counters.bad_cobs == 1, "bad COBS is counted");

    /* 300 bytes without a delimiter: counted once, then resync. */
    pb_frame_decoder_init(&d);
    memset(junk, 0x41, sizeof junk);
    CHECK(feed(&d, junk, sizeof junk, &type, out, &out_len) == 0 && d.counters.oversize == 1,
          "an oversize run is counted once");
    n = pb_link_encode(PB_LINK_STATUS_REQUEST, NULL, 0, frame, sizeof frame);
    CHECK(feed(&d, frame, n, &type, out, &out_len) == 0, "the frame that ends the oversize run is lost");
    CHECK(feed(&d, frame, n, &type, out, &out_len) == 1, "the next frame passes");
    CHECK(d.counters.oversize == 1 && d.counters.frames == 1, "oversize counted once");
}

static void test_cobs(void)
{
    uint8_t in[600], enc[700], dec[700];
    uint32_t seed = 12345;
    size_t len;
    bool all_ok = true;
    for (len = 0; len <= 520; len++) {
        size_t i, n;
        int m;
        for (i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            /* Long runs of non-zero bytes, and some zeros. */
            in[i] = (len % 3 == 0) ? (uint8_t)(1 + (seed >> 24) % 255) : (uint8_t)(seed >> 24);
        }
        n = pb_cobs_encode(in, len, enc, sizeof enc);
        for (i = 0; i < n; i++)
            if (enc[i] == 0)
                all_ok = false;
        m = pb_cobs_decode(enc, n, dec, sizeof dec);
        if (n == 0 || m != (int)len || memcmp(dec, in, len) != 0)
            all_ok = false;
    }
    CHECK(all_ok, "COBS round trips, 0 to 520 bytes, no zero in the encoding");
    CHECK(pb_cobs_encode(in, 10, enc, 10) == 0, "COBS refuses a short output");
}

static void test_ble(void)
{
    pb_ble_reassembler r;
    uint8_t frame[PB_COMMAND_MAX], chunk[300];
    const uint8_t *got;
    size_t got_len, n, i;
    unsigned count, k, frames = 0;

    for (i = 0; i < sizeof frame; i++)
        frame[i] = (uint8_t)i;
    pb_ble_reassembler_init(&r);
    count = pb_ble_chunk_count(sizeof frame, 23);
    CHECK(count == 12, "225 bytes take 12 chunks at MTU 23");
    CHECK(pb_ble_chunk_count(sizeof frame, 22) == 0, "MTU under 23 is refused");

    /* A lost chunk: the partial frame is dropped until a new counter 0. */
    for (k = 0; k < count; k++) {
        if (k == 3)
            continue;
        n = pb_ble_chunk(frame, sizeof frame, 23, k, chunk);
        if (pb_ble_push(&r, chunk, n, &got, &got_len))
            frames++;
    }
    CHECK(frames == 0 && r.counters.counter_errors == 1, "a lost chunk drops the frame");
    for (k = 0; k < count; k++) {
        n = pb_ble_chunk(frame, sizeof frame, 23, k, chunk);
        if (pb_ble_push(&r, chunk, n, &got, &got_len))
            frames++;
    }
    CHECK(frames == 1 && got_len == sizeof frame && memcmp(got, frame, got_len) == 0,
          "the next whole frame passes");

    /* A frame longer than any command is dropped. */
    pb_ble_reassembler_init(&r);
    memset(chunk, 0, sizeof chunk);
    for (k = 0; k < 13; k++) {
        chunk[0] = (uint8_t)k;
        (void)pb_ble_push(&r, chunk, 20, &got, &got_len);
    }
    CHECK(r.counters.oversize == 1, "an oversize frame is counted");
    CHECK(!pb_ble_push(&r, chunk, 0, &got, &got_len) && r.counters.empty_chunks == 1, "an empty chunk");
}

static void test_ccm_trap(void)
{
    uint8_t key[16] = { 1 }, nonce[12] = { 2 }, aad[36] = { 3 }, tag[8], forged[8];
    CHECK(pb_ccm_seal(&crypto, key, nonce, aad, sizeof aad, NULL, 0, tag) == PB_OK, "seal");
    CHECK(pb_ccm_open(&crypto, key, nonce, aad, sizeof aad, NULL, 0, NULL, tag) == PB_OK,
          "the genuine tag of an empty plaintext verifies");
    memset(forged, 0, sizeof forged);
    CHECK(pb_ccm_open(&crypto, key, nonce, aad, sizeof aad, NULL, 0, NULL, forged) == 1,
          "a forged tag over an empty plaintext is refused");
    memcpy(forged, tag, 8);
    forged[7] ^= 0x80;
    CHECK(pb_ccm_open(&crypto, key, nonce, aad, sizeof aad, NULL, 0, NULL, forged) == 1,
          "one flipped tag bit is refused");
}

int main(void)
{
    if (pb_mbedtls_init(&engine, &crypto) != 0)
        return 2;
    test_decoder();
    test_cobs();
    test_ble();
    test_ccm_trap();
    pb_mbedtls_free(&engine);
    return check_done("link");
}
