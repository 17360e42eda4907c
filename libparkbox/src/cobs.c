/* Consistent Overhead Byte Stuffing (docs/protocol.md, Serial link framing):
 * every 0x00 of the input is replaced, so 0x00 can end a frame. */
#include "parkbox.h"

size_t pb_cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap)
{
    size_t read = 0;
    size_t write = 1;
    size_t code_at = 0;
    uint8_t code = 1;

    if (out_cap < len + len / 254u + 1u)
        return 0;
    while (read < len) {
        if (in[read] == 0) {
            out[code_at] = code;
            code_at = write++;
            code = 1;
        } else {
            out[write++] = in[read];
            code++;
            if (code == 0xFF) {
                out[code_at] = code;
                code_at = write++;
                code = 1;
            }
        }
        read++;
    }
    out[code_at] = code;
    return write;
}

int pb_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap)
{
    size_t read = 0;
    size_t write = 0;

    while (read < len) {
        uint8_t code = in[read++];
        uint8_t i;
        if (code == 0)
            return -1;
        for (i = 1; i < code; i++) {
            if (read >= len || in[read] == 0 || write >= out_cap)
                return -1;
            out[write++] = in[read++];
        }
        /* A block shorter than 0xFF stands for a zero, unless it ends the input. */
        if (code != 0xFF && read < len) {
            if (write >= out_cap)
                return -1;
            out[write++] = 0;
        }
    }
    return (int)write;
}
