/* A minimal check harness: CHECK counts, reports a failure with its place and
 * goes on; check_done prints the counts and gives the exit code. */
#ifndef PB_CHECK_H
#define PB_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern unsigned check_count;
extern unsigned check_failures;

bool check_at(bool ok, const char *what, const char *file, int line, const char *context);
#define CHECK(cond, context) check_at((cond), #cond, __FILE__, __LINE__, (context))
int check_done(const char *suite);
void hex_print(const char *label, const uint8_t *data, size_t len);

#endif
