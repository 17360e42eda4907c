/* The RAM a box needs, from the structs themselves: printed for the README
 * and checked against the budget of 2 KB for the box (its state with a
 * 64-entry revocation list, its configuration) plus the link decoders. */
#include "check.h"
#include "parkbox.h"

#include <stdio.h>

#define RAM_BUDGET 2048u

int main(void)
{
    size_t box = sizeof(pb_box);
    size_t serial = sizeof(pb_frame_decoder);
    size_t ble = sizeof(pb_ble_reassembler);

    printf("  sizeof(pb_box_config)      %4zu\n", sizeof(pb_box_config));
    printf("  sizeof(pb_box_state)       %4zu  (%u revocations, %u keys' tries)\n", sizeof(pb_box_state),
           (unsigned)PB_REVOCATION_CAPACITY, (unsigned)PB_TRIES_CAPACITY);
    printf("  sizeof(pb_box)             %4zu  (config, state, store cursor, port pointers)\n", box);
    printf("  sizeof(pb_frame_decoder)   %4zu\n", serial);
    printf("  sizeof(pb_ble_reassembler) %4zu\n", ble);
    printf("  total                      %4zu  of %u\n", box + serial + ble, RAM_BUDGET);
    printf("  state image in the store   %4u bytes a slot, 2 slots\n", (unsigned)PB_STATE_IMAGE_LEN);
    CHECK(PB_REVOCATION_CAPACITY >= 64, "the revocation list holds at least 64 entries");
    CHECK(sizeof(pb_revocation) == 8, "a revocation entry is 8 bytes");
    CHECK(box + serial + ble <= RAM_BUDGET, "box state and both decoders fit 2 KB");
    return check_done("sizes");
}
