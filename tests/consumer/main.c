/* Scans one DirectML example through the installed library; exits 0 when it is right. */
#include <stdio.h>
#include <tscan.h>

int main(void) {
    float x[4] = {2, 1, 3, 5}, y[4], want[4] = {2, 3, 6, 11};
    int64_t size = 4;
    tscan_tensor in, out;
    tscan_scan_desc desc = {TSCAN_OP_SUM, 0, TSCAN_INCREASING, 0, TSCAN_ALGO_AUTO};
    if (tscan_tensor_init(&in, x, TSCAN_FLOAT32, 1, &size, NULL) ||
        tscan_tensor_init(&out, y, TSCAN_FLOAT32, 1, &size, NULL) ||
        tscan_scan_reference(&desc, &in, &out)) {
        fprintf(stderr, "tscan: %s\n", tscan_last_error());
        return 1;
    }
    for (int i = 0; i < 4; ++i)
        if (y[i] != want[i]) return 1;
    printf("tscan %s found through find_package: [2 1 3 5] -> [%g %g %g %g]\n", tscan_version_string(), y[0],
           y[1], y[2], y[3]);
    return 0;
}
