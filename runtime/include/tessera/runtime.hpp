// C++ layer over libtessera_rt: Status with its message, RAII device buffers, streams, events
// and graphs, typed tensor views and launch arguments. Header-only over the C API in
// runtime.h, so it adds no ABI of its own.
#ifndef TESSERA_RUNTIME_HPP
#define TESSERA_RUNTIME_HPP

#include "tessera/runtime.h"

#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <string>
#include <utility>

namespace tessera {

// A status and, on failure, the message the runtime produced for it.
class Status {
public:
  Status() = default;
  // Captures the calling thread's message when `code` is a failure.
  static Status from(tessera_status code) {
    Status s;
    s.code_ = code;
    if (code != TESSERA_SUCCESS)
      s.message_ = tessera_last_error_message();
    return s;
  }
  // A failure with a message of the caller's (checks done in C++ before any C call).
  static Status failure(tessera_status code, std::string message) {
    Status s;
    s.code_ = code;
    s.message_ = std::move(message);
    return s;
  }
  bool ok() const { return code_ == TESSERA_SUCCESS; }
  explicit operator bool() const { return ok(); }
  tessera_status code() const { return code_; }
  const std::string &message() const { return message_; }
  std::string toString() const {
    return ok() ? "ok" : std::string(tessera_status_name(code_)) + ": " + message_;
  }

private:
  tessera_status code_ = TESSERA_SUCCESS;
  std::string message_;
};

// The dtype of a C++ element type (f16/bf16/fp8 values are carried as raw integers, so use the
// tensor()/scalar() overloads that take an explicit dtype for them).
template <typename T> struct DtypeOf;
template <> struct DtypeOf<double> { static constexpr tessera_dtype value = TESSERA_F64; };
template <> struct DtypeOf<float> { static constexpr tessera_dtype value = TESSERA_F32; };
template <> struct DtypeOf<int8_t> { static constexpr tessera_dtype value = TESSERA_I8; };
template <> struct DtypeOf<int16_t> { static constexpr tessera_dtype value = TESSERA_I16; };
template <> struct DtypeOf<int32_t> { static constexpr tessera_dtype value = TESSERA_I32; };
template <> struct DtypeOf<int64_t> { static constexpr tessera_dtype value = TESSERA_I64; };
template <> struct DtypeOf<uint8_t> { static constexpr tessera_dtype value = TESSERA_U8; };
template <> struct DtypeOf<uint16_t> { static constexpr tessera_dtype value = TESSERA_U16; };
template <> struct DtypeOf<uint32_t> { static constexpr tessera_dtype value = TESSERA_U32; };
template <> struct DtypeOf<uint64_t> { static constexpr tessera_dtype value = TESSERA_U64; };
template <> struct DtypeOf<bool> { static constexpr tessera_dtype value = TESSERA_BOOL; };

// A dense row-major view. `device` is 0 for memory from tessera_malloc, TESSERA_HOST otherwise.
inline tessera_tensor tensor(void *data, tessera_dtype dtype, std::initializer_list<int64_t> shape,
                             int32_t device = 0) {
  tessera_tensor t;
  tessera_tensor_init(&t, data, dtype, static_cast<int32_t>(shape.size()), shape.begin(), device);
  return t;
}
template <typename T>
tessera_tensor tensor(T *data, std::initializer_list<int64_t> shape, int32_t device = 0) {
  return tensor(const_cast<void *>(static_cast<const void *>(data)), DtypeOf<std::remove_cv_t<T>>::value,
                shape, device);
}

// Launch arguments.
inline tessera_arg arg(const tessera_tensor &t) {
  tessera_arg a{};
  a.kind = TESSERA_PARAM_TENSOR;
  a.value.tensor = &t;
  return a;
}
// A scalar of `dtype` whose bits are the low sizeof(T) bytes of `bits`.
template <typename T> tessera_arg scalar(T value, tessera_dtype dtype = DtypeOf<T>::value) {
  static_assert(sizeof(T) <= 8, "scalars are at most 8 bytes");
  tessera_arg a{};
  a.kind = TESSERA_PARAM_SCALAR;
  a.dtype = dtype;
  __builtin_memcpy(a.value.bytes, &value, sizeof(T));
  return a;
}

// Device memory of the active device, freed on destruction.
class Buffer {
public:
  Buffer() = default;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  Buffer(Buffer &&o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), size_(o.size_) {}
  Buffer &operator=(Buffer &&o) noexcept {
    reset();
    ptr_ = std::exchange(o.ptr_, nullptr);
    size_ = o.size_;
    return *this;
  }
  ~Buffer() { reset(); }

  Status allocate(size_t bytes) {
    reset();
    Status s = Status::from(tessera_malloc(&ptr_, bytes));
    size_ = s.ok() ? bytes : 0;
    return s;
  }
  Status upload(const void *host, size_t bytes) { return Status::from(tessera_memcpy(ptr_, host, bytes)); }
  Status download(void *host, size_t bytes) const { return Status::from(tessera_memcpy(host, ptr_, bytes)); }
  void reset() {
    if (ptr_)
      tessera_free(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  void *data() const { return ptr_; }
  template <typename T> T *as() const { return static_cast<T *>(ptr_); }
  size_t size() const { return size_; }

private:
  void *ptr_ = nullptr;
  size_t size_ = 0;
};

// Owning wrappers for streams, events and graphs (and dist.hpp's meshes and distributed tensors).
template <typename H, tessera_status (*Destroy)(H)> class Handle {
public:
  Handle() = default;
  explicit Handle(H h) : h_(h) {}
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  Handle(Handle &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle &operator=(Handle &&o) noexcept {
    reset();
    h_ = std::exchange(o.h_, nullptr);
    return *this;
  }
  ~Handle() { reset(); }
  H get() const { return h_; }
  // Where a create function writes the handle (release the old one first: reset()).
  H *out() { return &h_; }
  void reset() {
    if (h_)
      Destroy(h_);
    h_ = nullptr;
  }

private:
  H h_ = nullptr;
};
using Stream = Handle<tessera_stream, tessera_stream_destroy>;
using Event = Handle<tessera_event, tessera_event_destroy>;
using Graph = Handle<tessera_graph, tessera_graph_destroy>;

inline Status launch(const tessera_kernel_desc *kernel, const tessera_launch_options *opts,
                     std::initializer_list<tessera_arg> args) {
  return Status::from(tessera_launch(kernel, opts, args.begin(), static_cast<uint32_t>(args.size())));
}

} // namespace tessera

#endif
