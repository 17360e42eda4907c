/* CRC-16/CCITT-FALSE (docs/protocol.md, Serial link framing): poly 0x1021,
 * init 0xFFFF, no reflection, no final xor. Bitwise: 230-byte frames do not
 * justify a 512-byte table in flash. */
#include "parkbox.h"

uint16_t pb_crc16_update(uint16_t crc, const uint8_t *data, size_t len)
{
    size_t i;
    for (i = 0; i < len; i++) {
        int bit;
        crc ^= (uint16_t)((uint16_t)data[i] << 8);
        for (bit = 0; bit < 8; bit++)
            crc = (crc & 0x8000u) ? (uint16_t)((crc << 1) ^ 0x1021u) : (uint16_t)(crc << 1);
    }
    return crc;
}

uint16_t pb_crc16(const uint8_t *data, size_t len)
{
    return pb_crc16_update(0xFFFFu, data, len);
}
