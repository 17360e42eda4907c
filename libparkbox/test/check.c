#include "check.h"

#include <stdio.h>

unsigned check_count;
unsigned check_failures;

bool check_at(bool ok, const char *what, const char *file, int line, const char *context)
{
    check_count++;
    if (!ok) {
        check_failures++;
        fprintf(stderr, "FAIL %s:%d: %s [%s]\n", file, line, what, context != NULL ? context : "");
    }
    return ok;
}

int check_done(const char *suite)
{
    printf("%s: %u checks, %u failed\n", suite, check_count, check_failures);
    return check_failures == 0 ? 0 : 1;
}

void hex_print(const char *label, const uint8_t *data, size_t len)
{
    size_t i;
    fprintf(stderr, "  %s: ", label);
    for (i = 0; i < len; i++)
        fprintf(stderr, "%02x", data[i]);
    fprintf(stderr, "\n");
}
