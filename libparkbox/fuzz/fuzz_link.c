/* libFuzzer target: the link layer. The input is fed byte by byte to the
 * serial decoder, and cut into BLE chunks (each chunk's length taken from
 * the input) for the reassembler. Whatever comes out must be a frame the
 * encoder gives back byte for byte, and never longer than the protocol
 * allows; the sanitizers catch any read or write out of bounds. */
#include "parkbox.h"

#include <stdlib.h>
#include <string.h>

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pb_frame_decoder serial;
    pb_ble_reassembler ble;
    size_t i;

    pb_frame_decoder_init(&serial);
    for (i = 0; i < size; i++) {
        uint8_t type;
        const uint8_t *payload;
        size_t len;
        if (pb_frame_decoder_push(&serial, data[i], &type, &payload, &len)) {
            uint8_t copy[PB_LINK_PAYLOAD_MAX], frame[PB_LINK_FRAME_MAX];
            pb_frame_decoder again;
            size_t n, j;
            unsigned frames = 0;
            check(len <= PB_LINK_PAYLOAD_MAX);
            memcpy(copy, payload, len);
            n = pb_link_encode(type, copy, len, frame, sizeof frame);
            check(n > 0 && n <= PB_LINK_FRAME_MAX && frame[n - 1] == 0);
            pb_frame_decoder_init(&again);
            for (j = 0; j < n; j++)
                if (pb_frame_decoder_push(&again, frame[j], &type, &payload, &len)) {
                    frames++;
                    check(j == n - 1 && memcmp(payload, copy, len) == 0);
                }
            check(frames == 1);
        }
    }

    pb_ble_reassembler_init(&ble);
    i = 0;
    while (i < size) {
        size_t chunk = data[i] % 64u, left = size - i - 1u;
        const uint8_t *frame;
        size_t len;
        i++;
        if (chunk > left)
            chunk = left;
        if (pb_ble_push(&ble, data + i, chunk, &frame, &len)) {
            uint8_t out[PB_COMMAND_MAX + 1];
            unsigned k, count = pb_ble_chunk_count(len, 23);
            check(len <= PB_COMMAND_MAX);
            for (k = 0; k < count; k++)
                check(pb_ble_chunk(frame, len, 23, k, out) > 0);
        }
        i += chunk;
    }
    return 0;
}
