/*
 * contract.cpp - the public header from C++17: it compiles inside an explicit extern "C"
 * block and on its own (include guard, its own extern "C"), every C contract check of
 * contract.c holds when compiled as C++, and C++'s exact type identity pins every member
 * and function signature of CONTRACT §3. Linking at all shows that the functions have C
 * linkage (a mangled declaration would not resolve against the C library).
 */
extern "C" {
#include "tscan.h"
}
#include "tscan.h" /* again, outside: the guard makes it a no-op */

#include <type_traits>

/* Every C check, the semantics tests included, compiled as C++. */
#include "contract.c"

/* ---- exact types -------------------------------------------------------------------------- */

template <typename A, typename B> constexpr bool same = std::is_same<A, B>::value;

static_assert(same<decltype(tscan_tensor::data), void *>, "tscan_tensor::data");
static_assert(same<decltype(tscan_tensor::dtype), tscan_dtype>, "tscan_tensor::dtype");
static_assert(same<decltype(tscan_tensor::ndim), uint32_t>, "tscan_tensor::ndim");
static_assert(same<decltype(tscan_tensor::sizes), int64_t[TSCAN_MAX_DIMS]>, "tscan_tensor::sizes");
static_assert(same<decltype(tscan_tensor::strides), int64_t[TSCAN_MAX_DIMS]>,
              "tscan_tensor::strides");
static_assert(same<decltype(tscan_scan_desc::op), tscan_op>, "tscan_scan_desc::op");
static_assert(same<decltype(tscan_scan_desc::axis), uint32_t>, "tscan_scan_desc::axis");
static_assert(same<decltype(tscan_scan_desc::direction), tscan_direction>,
              "tscan_scan_desc::direction");
static_assert(same<decltype(tscan_scan_desc::exclusive), int>, "tscan_scan_desc::exclusive");
static_assert(same<decltype(tscan_scan_desc::algo), tscan_algo>, "tscan_scan_desc::algo");
/* plain C structs: usable with memcpy, aggregate initialisation, C arrays */
static_assert(std::is_trivially_copyable<tscan_tensor>::value, "tscan_tensor is trivially copyable");
static_assert(std::is_standard_layout<tscan_tensor>::value, "tscan_tensor is standard layout");
static_assert(std::is_aggregate<tscan_tensor>::value, "tscan_tensor is an aggregate");
static_assert(std::is_trivially_copyable<tscan_scan_desc>::value, "tscan_scan_desc");
static_assert(std::is_standard_layout<tscan_scan_desc>::value, "tscan_scan_desc");
static_assert(std::is_aggregate<tscan_scan_desc>::value, "tscan_scan_desc");

/* enums are distinct types in C++ */
static_assert(std::is_enum<tscan_status>::value && std::is_enum<tscan_dtype>::value &&
                  std::is_enum<tscan_op>::value && std::is_enum<tscan_direction>::value &&
                  std::is_enum<tscan_algo>::value,
              "the five enums");
static_assert(same<decltype(TSCAN_SUCCESS), tscan_status>, "TSCAN_SUCCESS");
static_assert(same<decltype(TSCAN_ERROR_INVALID_ARGUMENT), tscan_status>, "status enumerators");
static_assert(same<decltype(TSCAN_ERROR_OVERLAP), tscan_status>, "status enumerators");
static_assert(same<decltype(TSCAN_ERROR_NOT_SUPPORTED), tscan_status>, "status enumerators");
static_assert(same<decltype(TSCAN_ERROR_WORKSPACE), tscan_status>, "status enumerators");
static_assert(same<decltype(TSCAN_ERROR_CUDA), tscan_status>, "status enumerators");
static_assert(same<decltype(TSCAN_ERROR_INTERNAL), tscan_status>, "status enumerators");
static_assert(same<decltype(TSCAN_FLOAT32), tscan_dtype>, "dtype enumerators");
static_assert(same<decltype(TSCAN_UINT64), tscan_dtype>, "dtype enumerators");
static_assert(same<decltype(TSCAN_DTYPE_COUNT), tscan_dtype>, "dtype enumerators");
static_assert(same<decltype(TSCAN_OP_SUM), tscan_op>, "op enumerators");
static_assert(same<decltype(TSCAN_OP_COUNT), tscan_op>, "op enumerators");
static_assert(same<decltype(TSCAN_DECREASING), tscan_direction>, "direction enumerators");
static_assert(same<decltype(TSCAN_ALGO_AUTO), tscan_algo>, "algo enumerators");
static_assert(same<decltype(TSCAN_ALGO_COUNT), tscan_algo>, "algo enumerators");
static_assert(TSCAN_MAX_DIMS == 8 && TSCAN_DTYPE_COUNT == 12 && TSCAN_SUCCESS == 0,
              "values, as constant expressions in C++");

/* exact function types */
static_assert(same<decltype(tscan_tensor_init),
                   tscan_status(tscan_tensor *, void *, tscan_dtype, uint32_t, const int64_t *,
                                const int64_t *)>,
              "tscan_tensor_init");
static_assert(same<decltype(tscan_scan_workspace_size),
                   tscan_status(const tscan_scan_desc *, const tscan_tensor *,
                                const tscan_tensor *, size_t *)>,
              "tscan_scan_workspace_size");
static_assert(same<decltype(tscan_scan),
                   tscan_status(const tscan_scan_desc *, const tscan_tensor *,
                                const tscan_tensor *, void *, size_t, cudaStream_t)>,
              "tscan_scan");
static_assert(same<decltype(tscan_scan_reference),
                   tscan_status(const tscan_scan_desc *, const tscan_tensor *,
                                const tscan_tensor *)>,
              "tscan_scan_reference");
static_assert(same<decltype(tscan_scan_supported),
                   tscan_status(const tscan_scan_desc *, const tscan_tensor *,
                                const tscan_tensor *)>,
              "tscan_scan_supported");
static_assert(same<decltype(tscan_scan_auto_algo),
                   tscan_status(const tscan_scan_desc *, const tscan_tensor *,
                                const tscan_tensor *, tscan_algo *)>,
              "tscan_scan_auto_algo");
static_assert(same<decltype(tscan_status_string), const char *(tscan_status)>,
              "tscan_status_string");
static_assert(same<decltype(tscan_last_error), const char *()>, "tscan_last_error");
static_assert(same<decltype(tscan_dtype_name), const char *(tscan_dtype)>, "tscan_dtype_name");
static_assert(same<decltype(tscan_dtype_size), size_t(tscan_dtype)>, "tscan_dtype_size");
static_assert(same<decltype(tscan_algo_name), const char *(tscan_algo)>, "tscan_algo_name");
static_assert(same<decltype(tscan_op_name), const char *(tscan_op)>, "tscan_op_name");
static_assert(same<decltype(tscan_version), int()>, "tscan_version");
static_assert(same<decltype(tscan_version_string), const char *()>, "tscan_version_string");

/* A C++ caller's idioms: value-initialisation, typed enums, const views, a lambda scanning. */
Test(contract_cpp, cpp_usage) {
    int32_t data[6] = {1, 2, 3, 4, 5, 6};
    const int64_t sizes[2] = {2, 3};
    tscan_tensor t{};
    cr_assert_eq(t.data, nullptr);
    cr_assert_eq(t.ndim, 0u);
    cr_assert_eq(tscan_tensor_init(&t, data, TSCAN_INT32, 2, sizes, nullptr), TSCAN_SUCCESS);
    const tscan_tensor &view = t;
    tscan_scan_desc desc{};
    desc.op = TSCAN_OP_SUM;
    desc.axis = 1;
    auto scan = [&](const tscan_scan_desc &d) { return tscan_scan_reference(&d, &view, &view); };
    cr_assert_eq(scan(desc), TSCAN_SUCCESS, "%s", tscan_last_error());
    const int32_t want[6] = {1, 3, 6, 4, 9, 15};
    for (int k = 0; k < 6; k++) cr_assert_eq(data[k], want[k], "element %d", k);
    for (int s = TSCAN_SUCCESS; s <= TSCAN_ERROR_INTERNAL; s++)
        cr_assert(tscan_status_string(static_cast<tscan_status>(s)) != nullptr);
}
