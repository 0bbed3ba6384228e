/* policy.c - AUTO's tuning: one row per architecture, chosen by the device at hand. Every
 * threshold below was measured on an H100 (transposed_columns_below_bytes on an H200 only), the
 * short-line, strided-output, lanes and long-row fill ones on an H200 too (bench/NOTES.md §3.1
 * has the evidence, rule by rule); the rows of other architectures hold Hopper's values, and
 * say so, until a sweep on such a part replaces them (ARCHITECTURE.md, "Adding an
 * architecture"). What the device itself tells (its SM count) is read from it, not tabled. The
 * kernels' compile-time tuning lives beside them (ARCHITECTURE.md, "Where tuning lives"). */
#include "tscan_internal.h"

#define TSCAN_HOPPER_THRESHOLDS                                                                              \
    .few_lines = 4, .long_line_min = 16384, .cub_sum_below_4byte = INT64_C(1) << 20, .cub_sum_below_8byte = INT64_C(1) << 21, \
    .unpacked_cub_below = INT64_C(1) << 24, .one_wave_tiles_per_sm = 4, .rows_max_units = 8192,           \
    .rows_max_units_many_lines = 16384, .many_lines = 1024, .transposed_min_lines = 32, .transposed_min_n = 256,  \
    .transposed_columns_below_bytes = 16,                                                                   \
    .columns_max_n = 16, .columns_from_lines = 32768, .packed_lookback_below_lines = INT64_C(1) << 18,        \
    .wide_lookback_min_n = 1024, .row_alignment_bytes = 128, .columns_short_line_n = 4,                     \
    .columns_short_line_bytes = 16, .columns_short_line_min_bytes = 4, .stream_short_line_bytes = 64,          \
    .stream_unaligned_line_bytes = 512, .stream_byte_halo_max_bytes = 2048, .lanes_min_n = 1024, .lanes_max_inner = 32,    \
    .lanes_along_lines_min = 4, .pairs_lookback_min_run = 64, .lookback_min_fill_pct = 66,            \
    .replicate_min_copies = 3, .replicate_min_output_bytes = INT64_C(4) << 20, .replicate_min_row_bytes = 128,         \
    .replicate_repeated_max_elem_bytes = 2, .replicate_repeated_max_distinct_bytes = INT64_C(1) << 20,    \
    .gather_min_output_bytes = INT64_C(4) << 20, .gather_min_lane_gap_bytes = 32, .gather_min_sharing_lines = 256,  \
    .gather_wide_min_reuse_bytes = INT64_C(8) << 20

/* Highest cc first: a device takes the first row whose min_cc it reaches. */
static const tscan_auto_policy rows[] = {
    {.min_cc = 120, .measured_on = "sm_90 (H100); not measured on sm_120", TSCAN_HOPPER_THRESHOLDS},
    {.min_cc = 100, .measured_on = "sm_90 (H100); not measured on sm_100", TSCAN_HOPPER_THRESHOLDS},
    {.min_cc = 90, .measured_on = "sm_90 (H100)", TSCAN_HOPPER_THRESHOLDS},
    {.min_cc = 0, .measured_on = "sm_90 (H100); not measured before sm_90", TSCAN_HOPPER_THRESHOLDS},
};

const tscan_auto_policy *tscan_auto_policy_for(int cc) {
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        if (cc >= rows[i].min_cc) return &rows[i];
    return &rows[sizeof rows / sizeof rows[0] - 1];
}

tscan_planning tscan_planning_for_current_device(void) {
    enum { H100_CC = 90, H100_SMS = 132 };
    const tscan_device_info *info = NULL;
    tscan_planning plan = {tscan_auto_policy_for(H100_CC), H100_SMS};
    if (tscan_device_present() && tscan_current_device_info(&info) == TSCAN_SUCCESS) {
        plan.policy = tscan_auto_policy_for(info->cc);
        plan.sm_count = info->sm_count;
    }
    return plan;
}
