/* Sorts three lines with libxsort and prints them: "apple", "fig", "pear". */
#include <stdio.h>
#include <string.h>

#include "xsort.h"

int main(void) {
    const char input[] = "pear\napple\nfig\n";
    xsort_t ctx;
    if (xsort_define("-format=delimiter:'\\n' -memory=64m", 0, NULL, &ctx) != XSORT_SUCCESS) {
        fprintf(stderr, "xsort: %s\n", xsort_message(&ctx));
        xsort_end(&ctx);
        return 1;
    }
    xsort_release_recs(input, strlen(input), &ctx); /* any number of calls, whole records */
    xsort_release_end(&ctx);

    char buf[4096];
    size_t size = sizeof buf;
    int status;
    while ((status = xsort_return_recs(buf, &size, &ctx)) == XSORT_SUCCESS) {
        fwrite(buf, 1, size, stdout); /* whole records */
        size = sizeof buf;
    }
    if (status != XSORT_END_OF_OUTPUT) fprintf(stderr, "xsort: %s\n", xsort_message(&ctx));
    xsort_end(&ctx);
    return status == XSORT_END_OF_OUTPUT ? 0 : 1;
}
