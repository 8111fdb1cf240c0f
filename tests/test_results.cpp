// Results layer: Record, HDF5 result files (write, read, validation), tables, file discovery, and
// docs/RESULTS.md listing every field.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <set>
#include <random>
#include <sstream>
#include <stdexcept>

#include "base/crc32.hpp"
#include "base/errors.hpp"
#include "base/stalls.hpp"
#include "harness/stats.hpp"
#include "results/bounded_series.hpp"
#include "results/record.hpp"
#include "results/result_file.hpp"
#include "results/table.hpp"

namespace fs = std::filesystem;
using namespace hpcnn;

namespace {

class Results : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "hpcnn-test-results-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  std::vector<std::string> entries(const std::string& d) const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  // A committed file with one point; returns its path.
  std::string good_file(const std::string& subdir = "good") {
    ResultWriter writer(path(subdir), "hpcnn-train");
    ResultPoint point;
    point.record.set("suite", "hpcnn-train");
    point.record.set("batch", std::int64_t{32});
    point.record.set("img_per_s", 123.5);
    point.arrays.push_back({"iter_time_s", "s", {4}, {0.1, 0.2, 0.3, 0.4}});
    writer.add_point(point);
    return writer.commit(Provenance{});
  }
  std::string dir_;
};

// Expects `fn` to throw RuntimeError whose message contains every string of `parts`.
template <typename Fn>
void expect_runtime_error(Fn fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no RuntimeError thrown";
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    for (const auto& part : parts) EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
  }
}

// Opens a file for editing with the plain HDF5 API (to forge bad files).
struct RawFile {
  explicit RawFile(const std::string& p) : id(H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) {}
  ~RawFile() {
    if (id >= 0) H5Fclose(id);
  }
  hid_t id;
};

// Files edited in place fail the writer's CRC-32, and a file without a valid checksum block is
// never handed to HDF5; forged files are therefore resealed: the checksum block rewritten for
// their new bytes, as a hostile user would (the reader then validates them attribute by
// attribute).
void reseal(const std::string& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f);
  f.seekg(512);
  Crc32 crc;
  std::uint64_t size = 512;
  char buf[4096];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    crc.add(buf, static_cast<std::size_t>(f.gcount()));
    size += static_cast<std::uint64_t>(f.gcount());
  }
  f.clear();
  char block[512] = {};
  std::snprintf(block, sizeof block, "hpcnn-result\nchecksum-block 1\nsize %llu\ncrc32 %08x\n",
                static_cast<unsigned long long>(size), static_cast<unsigned>(crc.value()));
  f.seekp(0);
  f.write(block, sizeof block);
  ASSERT_TRUE(f);
}

void replace_attribute(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, const void* value) {
  if (H5Aexists(obj, name) > 0) {
    ASSERT_GE(H5Adelete(obj, name), 0);
  }
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attr, 0);
  ASSERT_GE(H5Awrite(attr, mem_type, value), 0);
  H5Aclose(attr);
  H5Sclose(space);
}

// PREFIX + YYYYmmddTHHMMSSZ + MIDDLE + SUFFIX (the stamp in a result file name).
bool stamped(const std::string& name, const std::string& prefix, const std::string& middle,
             const std::string& suffix) {
  const std::string shape = "ddddddddTddddddZ";  // 'd' = digit
  if (name.size() != prefix.size() + shape.size() + middle.size() + suffix.size()) return false;
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  std::size_t i = prefix.size();
  for (char c : shape) {
    char n = name[i++];
    if (c == 'd' ? !std::isdigit(static_cast<unsigned char>(n)) : n != c) return false;
  }
  return name.compare(i, middle.size(), middle) == 0 && name.compare(i + middle.size(), suffix.size(), suffix) == 0;
}

}  // namespace

// ----------------------------------------------------------------------------------------------
// Record and field table

TEST(Record, SetGetTextAndTypeChecks) {
  Record r;
  r.set("model", "resnet50");
  r.set("batch", std::int64_t{64});
  r.set("img_per_s", 1234.5678);
  r.set("batch", std::int64_t{128});  // replaces, keeps its position
  ASSERT_EQ(r.items().size(), 3u);
  EXPECT_EQ(r.items()[1].first, "batch");
  EXPECT_EQ(std::get<std::int64_t>(*r.get("batch")), 128);
  EXPECT_EQ(r.number("batch"), 128.0);
  EXPECT_EQ(r.number("img_per_s"), 1234.5678);
  EXPECT_FALSE(r.number("model").has_value());
  EXPECT_FALSE(r.number("threads").has_value());
  EXPECT_EQ(r.get("threads"), nullptr);
  EXPECT_EQ(r.text("img_per_s"), "1234.6");
  EXPECT_EQ(r.text("batch"), "128");
  EXPECT_EQ(r.text("model"), "resnet50");
  EXPECT_EQ(r.text("threads"), "");
  EXPECT_THROW(r.set("no_such_field", std::int64_t{1}), std::logic_error);
  EXPECT_THROW(r.set("batch", 1.0), std::logic_error);
  EXPECT_THROW(r.set("img_per_s", std::int64_t{1}), std::logic_error);
  EXPECT_THROW(r.set("model", 3.0), std::logic_error);
}

TEST(Record, FieldTableIsConsistent) {
  std::set<std::string> names;
  for (const Field& f : fields()) {
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate field " << f.name;
    EXPECT_EQ(find_field(f.name), &f);
    EXPECT_EQ(std::string(f.name).find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string::npos)
        << f.name;
    EXPECT_NE(std::string(f.help), "") << f.name;
    char conv = std::string(f.format).back();
    switch (f.type) {
      case FieldType::String: EXPECT_EQ(conv, 's') << f.name; break;
      case FieldType::Int: EXPECT_NE(std::string(f.format).find("ll"), std::string::npos) << f.name; break;
      case FieldType::Float: EXPECT_NE(std::string("fgeFGE").find(conv), std::string::npos) << f.name; break;
    }
  }
  for (const char* required : {"suite", "model", "backend", "dataset", "mode", "batch", "threads", "ranks",
                               "image_size", "classes", "params", "iters", "warmup", "seed", "img_per_s",
                               "iter_median_s", "iter_mean_s", "iter_std_s", "iter_min_s", "iter_max_s",
                               "iter_p5_s", "iter_p95_s", "load_s", "forward_s", "backward_s", "update_s",
                               "flops_per_image", "gflops", "peak_rss_mib", "status", "status_reason",
                               "reproducer"})
    EXPECT_NE(find_field(required), nullptr) << required;
  EXPECT_EQ(find_field("nope"), nullptr);
}

// docs/RESULTS.md has a row "| `name` | type | unit |" for every field ("-" for no unit).
TEST(Record, DocsListEveryField) {
#ifdef HPCNN_SRCDIR
  fs::path doc = fs::path(HPCNN_SRCDIR) / "docs/RESULTS.md";
#else
  fs::path doc = fs::path(__FILE__).parent_path().parent_path() / "docs/RESULTS.md";
#endif
  std::ifstream in(doc);
  ASSERT_TRUE(in) << doc;
  std::stringstream text;
  text << in.rdbuf();
  for (const Field& f : fields()) {
    std::string row = std::string("| `") + f.name + "` | " + type_name(f.type) + " | " + (*f.unit ? f.unit : "-") + " |";
    EXPECT_NE(text.str().find(row), std::string::npos) << doc << " lacks the row: " << row;
  }
}

// ----------------------------------------------------------------------------------------------
// Write + read

TEST_F(Results, RoundTripEveryFieldAndArrays) {
  std::vector<ResultPoint> points(2);
  std::int64_t i = 0;
  for (const Field& f : fields()) {
    ++i;
    switch (f.type) {
      case FieldType::Int:
        points[0].record.set(f.name, std::int64_t{1} << 40 | i);
        points[1].record.set(f.name, -i);
        break;
      case FieldType::Float:
        points[0].record.set(f.name, 1.0 / 3.0 + static_cast<double>(i));
        points[1].record.set(f.name, i == 15 ? std::numeric_limits<double>::quiet_NaN() : -1e-300 * i);
        break;
      case FieldType::String:
        points[0].record.set(f.name, std::string("värde, \"") + f.name + "\" | ∑");
        points[1].record.set(f.name, std::string());
        break;
    }
  }
  points[0].arrays.push_back({"iter_time_s", "s", {5}, {0.5, 0.25, 0.125, 1e-9, 3.0}});
  points[0].arrays.push_back({"matrix", "", {2, 3}, {1, 2, 3, 4, 5, 6}});
  points[0].arrays.push_back({"scalar", "B", {}, {42.0}});
  points[0].arrays.push_back({"empty", "s", {0}, {}});
  // The third point sets only a few fields, in a non-table order.
  ResultPoint sparse;
  sparse.record.set("status", "skipped");
  sparse.record.set("batch", std::int64_t{8});
  points.push_back(sparse);

  std::string file;
  {
    ResultWriter writer(path("out"), "hpcnn-train");
    for (const auto& p : points) writer.add_point(p);
    file = writer.commit(Provenance{});
  }
  ResultRun run = read_result_file(file);
  EXPECT_EQ(run.path, file);
  EXPECT_EQ(run.schema_version, kSchemaVersion);
  ASSERT_EQ(run.points.size(), points.size());
  for (std::size_t p = 0; p < points.size(); ++p) {
    const auto& want = points[p].record.items();
    const auto& got = run.points[p].record.items();
    ASSERT_EQ(got.size(), want.size()) << "point " << p;
    for (std::size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(got[k].first, want[k].first) << "point " << p << ": fields keep their order";
      const auto* wd = std::get_if<double>(&want[k].second);
      if (wd && std::isnan(*wd)) {
        EXPECT_TRUE(std::isnan(std::get<double>(got[k].second)));
      } else {
        EXPECT_EQ(got[k].second, want[k].second) << "point " << p << " field " << want[k].first;
      }
    }
  }
  const auto& arrays = run.points[0].arrays;  // read back by name
  ASSERT_EQ(arrays.size(), 4u);
  std::map<std::string, Array> by_name;
  for (const auto& a : arrays) by_name[a.name] = a;
  for (const auto& want : points[0].arrays) {
    ASSERT_TRUE(by_name.count(want.name)) << want.name;
    const Array& got = by_name[want.name];
    EXPECT_EQ(got.unit, want.unit) << want.name;
    EXPECT_EQ(got.dims, want.dims) << want.name;
    EXPECT_EQ(got.data, want.data) << want.name;
  }
  EXPECT_TRUE(run.points[1].arrays.empty());
}

TEST_F(Results, ProvenanceRoundTrip) {
  Provenance p;
  p.suite = "hpcnn-train";
  p.command_line = "hpcnn-train --batch 32,64 --model 'res net'";
  p.reproducer = "mpirun -n 2 hpcnn-train --batch 32,64 --model 'res net' --seed 7";
  p.hpcnn_version = "0.1.0";
  p.configure_options = "--with-dnnl=/opt/dnnl";
  p.start_time = "2024-05-01T12:00:00Z";
  p.end_time = "2024-05-01T12:05:00Z";
  p.job_id = "";
  p.hosts = {"node001", "node001", "nöde002"};
  p.mpi_size = 3;
  p.libraries = {{"hdf5", "1.10.8"}, {"openmpi", "4.1.4"}, {"dnnl", "3.1"}};
  p.settings = {{"threads", "1,2"}, {"batch", "32,64"}, {"backend", "reference"}, {"out/dir", "x"}};
  std::string file;
  {
    ResultWriter writer(path("prov"), p.suite);
    file = writer.commit(p);
  }
  ResultRun run = read_result_file(file);
  const Provenance& q = run.provenance;
  EXPECT_EQ(q.suite, p.suite);
  EXPECT_EQ(q.command_line, p.command_line);
  EXPECT_EQ(q.reproducer, p.reproducer);
  EXPECT_EQ(q.hpcnn_version, p.hpcnn_version);
  EXPECT_EQ(q.configure_options, p.configure_options);
  EXPECT_EQ(q.start_time, p.start_time);
  EXPECT_EQ(q.end_time, p.end_time);
  EXPECT_EQ(q.job_id, p.job_id);
  EXPECT_EQ(q.hosts, p.hosts);
  EXPECT_EQ(q.mpi_size, p.mpi_size);
  EXPECT_EQ(q.libraries, p.libraries);  // in the order given
  EXPECT_EQ(q.settings, p.settings);
  EXPECT_TRUE(run.points.empty());
}

TEST_F(Results, InvalidUtf8IsReplaced) {
  ResultWriter writer(path("u"), "s");
  ResultPoint point;
  point.record.set("model", std::string("ok\xff\xc3(end"));
  writer.add_point(point);
  ResultRun run = read_result_file(writer.commit(Provenance{}));
  EXPECT_EQ(run.points.at(0).record.text("model"), "ok\xef\xbf\xbd\xef\xbf\xbd(end");
}

TEST_F(Results, FileNamesAndCommit) {
  ResultWriter a(path("names"), "hpcnn-infer");
  ResultWriter b(path("names"), "hpcnn-infer");  // same second, same pid: must not collide
  const std::string pid = std::to_string(getpid());
  EXPECT_TRUE(stamped(fs::path(a.temp_path()).filename().string(), ".hpcnn-infer-", "-" + pid, ".h5.tmp"))
      << a.temp_path();
  EXPECT_NE(a.temp_path(), b.temp_path());
  EXPECT_FALSE(fs::exists(a.temp_path()));  // nothing on disk before the commit
  std::string fa = a.commit(Provenance{}), fb = b.commit(Provenance{});
  EXPECT_TRUE(stamped(fs::path(fa).filename().string(), "hpcnn-infer-", "-" + pid, ".h5")) << fa;
  EXPECT_FALSE(stamped("hpcnn-infer-2024050xT120000Z-" + pid + ".h5", "hpcnn-infer-", "-" + pid, ".h5"));
  EXPECT_NE(fa, fb);
  EXPECT_EQ(fs::path(fa).parent_path(), fs::path(path("names")));
  EXPECT_FALSE(fs::exists(a.temp_path()));
  EXPECT_TRUE(fs::exists(fa));
  EXPECT_TRUE(fs::exists(fb));
  EXPECT_THROW(a.commit(Provenance{}), std::logic_error);
  EXPECT_THROW(a.add_point(ResultPoint{}), std::logic_error);
  EXPECT_EQ(entries(path("names")).size(), 2u);
}

TEST_F(Results, UncommittedWriterLeavesNoFile) {
  {
    ResultWriter writer(path("abandoned"), "hpcnn-train");
    ResultPoint point;
    point.record.set("batch", std::int64_t{1});
    writer.add_point(point);
    EXPECT_FALSE(fs::exists(writer.temp_path()));  // written whole by the commit, never in parts
  }
  EXPECT_TRUE(fs::is_directory(path("abandoned")));
  EXPECT_TRUE(entries(path("abandoned")).empty());
}

TEST_F(Results, WriterCreatesNestedDirectory) {
  ResultWriter writer(path("a/b/c"), "x");
  EXPECT_TRUE(fs::is_directory(path("a/b/c")));
}

TEST_F(Results, UnwritableDirectoryNamesIt) {
  std::ofstream(path("regular")) << "not a directory\n";
  const std::string bad = path("regular/results");
  expect_runtime_error([&] { ResultWriter writer(bad, "hpcnn-train"); }, {bad});
  expect_runtime_error([&] { ResultWriter writer(path("regular"), "hpcnn-train"); }, {path("regular")});
}

TEST_F(Results, ArrayDimsMustMatchData) {
  ResultWriter writer(path("dims"), "x");
  ResultPoint point;
  point.arrays.push_back({"a", "s", {2, 2}, {1, 2, 3}});
  EXPECT_THROW(writer.add_point(point), std::logic_error);
  point.arrays = {{"a/b", "s", {1}, {1}}};
  EXPECT_THROW(writer.add_point(point), std::logic_error);
  point.arrays = {{"a", "s", {1}, {1}}, {"a", "s", {1}, {2}}};  // same name twice
  EXPECT_THROW(writer.add_point(point), std::logic_error);
  point.arrays = {{"a", "s", {1}, {1}}};
  writer.add_point(point);  // a failed point leaves nothing behind
  ResultRun run = read_result_file(writer.commit(Provenance{}));
  ASSERT_EQ(run.points.size(), 1u);
  EXPECT_EQ(run.points[0].arrays.at(0).data, std::vector<double>{1});
}

// ----------------------------------------------------------------------------------------------
// Validation of what is read

TEST_F(Results, MissingFile) {
  expect_runtime_error([&] { read_result_file(path("none.h5")); }, {path("none.h5"), "no such file"});
}

TEST_F(Results, UnknownSchemaVersionIsRejected) {
  std::string file = good_file();
  {
    RawFile raw(file);
    ASSERT_GE(raw.id, 0);
    int version = 999;
    replace_attribute(raw.id, "schema_version", H5T_STD_I32LE, H5T_NATIVE_INT, &version);
  }
  reseal(file);
  expect_runtime_error([&] { read_result_file(file); }, {file, "schema version 999", "not supported", "1"});
}

TEST_F(Results, ForeignHdf5FileIsRejected) {
  const std::string file = path("foreign.h5");
  hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hsize_t dim = 3;
  hid_t space = H5Screate_simple(1, &dim, nullptr);
  hid_t set = H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  double values[3] = {1, 2, 3};
  H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
  H5Dclose(set);
  H5Sclose(space);
  H5Fclose(f);
  expect_runtime_error([&] { read_result_file(file); }, {file, "not an hpcnn result file"});
  // The same with a valid checksum block (HDF5 skips its 512-byte user block): HDF5's view of it
  // lacks the format attribute.
  const std::string sealed = path("foreign-sealed.h5");
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  ASSERT_GE(H5Pset_userblock(fcpl, 512), 0);
  f = H5Fcreate(sealed.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  H5Fclose(f);
  H5Pclose(fcpl);
  reseal(sealed);
  expect_runtime_error([&] { read_result_file(sealed); }, {sealed, "no 'format' attribute"});
}

TEST_F(Results, WrongFormatValueIsRejected) {
  std::string file = good_file();
  {
    RawFile raw(file);
    int not_a_string = 7;
    replace_attribute(raw.id, "format", H5T_STD_I32LE, H5T_NATIVE_INT, &not_a_string);
  }
  reseal(file);
  expect_runtime_error([&] { read_result_file(file); }, {file, "format", "expected string"});
}

TEST_F(Results, FieldOfWrongTypeIsRejected) {
  std::string file = good_file();
  {
    RawFile raw(file);
    hid_t g = H5Gopen2(raw.id, "/points/000000", H5P_DEFAULT);
    ASSERT_GE(g, 0);
    double batch = 32.0;
    replace_attribute(g, "batch", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &batch);
    H5Gclose(g);
  }
  reseal(file);
  expect_runtime_error([&] { read_result_file(file); }, {file, "/points/000000", "'batch'", "expected int"});
}

TEST_F(Results, UnknownAttributesAreSkipped) {
  std::string file = good_file();
  {
    RawFile raw(file);
    hid_t g = H5Gopen2(raw.id, "/points/000000", H5P_DEFAULT);
    ASSERT_GE(g, 0);
    double x = 1.5;
    replace_attribute(g, "field_from_the_future", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &x);
    H5Gclose(g);
  }
  reseal(file);
  ResultRun run = read_result_file(file);
  ASSERT_EQ(run.points.size(), 1u);
  // suite, batch, img_per_s, and the stall_share and iter_mean_s the reader computes from iter_time_s.
  EXPECT_EQ(run.points[0].record.items().size(), 5u);
  EXPECT_EQ(run.points[0].record.get("field_from_the_future"), nullptr);
}

// A file whose points carry median-based rates and no stall share is read with the delivered
// figures in their place, computed from the times it holds; a point that has them is left alone.
TEST_F(Results, MedianRatesOfOlderFilesAreReadAsDelivered) {
  ResultWriter writer(path("older"), "hpcnn-train");
  ResultPoint train;  // two ranks, four iterations: slowest 0.1 0.1 0.1 0.5; median 0.1, mean 0.2
  train.record.set("suite", "hpcnn-train");
  train.record.set("img_per_s", 640.0);  // 2 ranks x 32 / 0.1 s
  train.record.set("gflops", 6.4);
  train.record.set("iter_median_s", 0.1);
  train.record.set("iter_mean_s", 0.2);
  train.arrays.push_back({"iter_time_s", "s", {2, 4}, {0.1, 0.1, 0.1, 0.5, 0.05, 0.1, 0.1, 0.2}});
  writer.add_point(train);
  ResultPoint gemm;  // calls 1 1 1 1 1 1 1 1 1 11 ms: median 1 ms, mean 2 ms
  gemm.record.set("suite", "hpcnn-blas");
  gemm.record.set("sweep", "gemm");
  gemm.record.set("gflops", 100.0);
  gemm.record.set("iter_median_s", 0.001);
  std::vector<double> calls(10, 0.001);
  calls.back() = 0.011;
  gemm.arrays.push_back({"call_time_s", "s", {1, 10}, calls});
  writer.add_point(gemm);
  ResultPoint fresh = train;  // written with the delivered figures: as it is
  fresh.record.set("img_per_s", 320.0);
  fresh.record.set("img_per_s_median", 640.0);
  fresh.record.set("stall_share", 0.5);
  writer.add_point(fresh);
  const ResultRun run = read_result_file(writer.commit(Provenance{}));
  ASSERT_EQ(run.points.size(), 3u);
  const Record& t = run.points[0].record;
  EXPECT_DOUBLE_EQ(*t.number("img_per_s"), 320.0);
  EXPECT_DOUBLE_EQ(*t.number("img_per_s_median"), 640.0);
  EXPECT_DOUBLE_EQ(*t.number("gflops"), 3.2);
  EXPECT_DOUBLE_EQ(*t.number("gflops_median"), 6.4);
  EXPECT_DOUBLE_EQ(*t.number("stall_share"), 0.4 / 0.8);
  const Record& g = run.points[1].record;
  EXPECT_NEAR(*g.number("gflops"), 50.0, 1e-9);
  EXPECT_DOUBLE_EQ(*g.number("gflops_median"), 100.0);
  EXPECT_NEAR(*g.number("iter_mean_s"), 0.002, 1e-15);
  EXPECT_NEAR(*g.number("stall_share"), 0.01 / 0.02, 1e-12);
  const Record& f = run.points[2].record;
  EXPECT_DOUBLE_EQ(*f.number("img_per_s"), 320.0);
  EXPECT_DOUBLE_EQ(*f.number("img_per_s_median"), 640.0);
}

TEST_F(Results, UncommittedFileIsRejected) {
  {
    ResultWriter writer(path("tmp"), "x");
    writer.add_point(ResultPoint{});
    EXPECT_FALSE(fs::exists(writer.temp_path()));  // nothing on disk before the commit
  }
  // A file without its checksum block (an empty one, say) is never handed to HDF5.
  std::string empty = path("empty.h5");
  std::ofstream(empty).flush();
  expect_runtime_error([&] { read_result_file(empty); }, {empty, "not an hpcnn result file"});
  // A file without /provenance (and a valid checksum): HDF5's view of it is checked too.
  const std::string file = good_file();
  {
    RawFile raw(file);
    ASSERT_GE(H5Ldelete(raw.id, "provenance", H5P_DEFAULT), 0);
  }
  reseal(file);
  expect_runtime_error([&] { read_result_file(file); }, {file, "provenance"});
}

TEST_F(Results, TruncatedFileIsRejected) {
  std::string file = good_file();
  std::string cut = path("truncated.h5");
  fs::copy_file(file, cut);
  fs::resize_file(cut, fs::file_size(cut) / 2);
  expect_runtime_error([&] { read_result_file(cut); }, {cut, "truncated file"});
  reseal(cut);  // HDF5 notices too
  expect_runtime_error([&] { read_result_file(cut); }, {cut, "truncated"});
  std::string tiny = path("tiny.h5");
  fs::copy_file(file, tiny);
  fs::resize_file(tiny, 100);
  expect_runtime_error([&] { read_result_file(tiny); }, {tiny});
}

// Damage HDF5 does not detect itself (variable-length strings are not checksummed) can crash the
// library; the writer's CRC-32 catches it before HDF5 parses the file.
TEST_F(Results, CorruptedFileIsRejected) {
  std::string file = good_file();
  const auto size = fs::file_size(file);
  for (std::uintmax_t offset : {std::uintmax_t{600}, size / 2, size - 1}) {
    std::string bad = path("corrupt-" + std::to_string(offset) + ".h5");
    fs::copy_file(file, bad);
    std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 0x5a));
    f.close();
    expect_runtime_error([&] { read_result_file(bad); }, {bad, "corrupted file", "CRC-32"});
  }
  std::string longer = path("longer.h5");
  fs::copy_file(file, longer);
  std::ofstream(longer, std::ios::app) << "x";
  expect_runtime_error([&] { read_result_file(longer); }, {longer, "corrupted file"});
}

TEST_F(Results, RandomBytesAndEmptyFileAreRejected) {
  std::string junk = path("junk.h5");
  {
    std::ofstream out(junk, std::ios::binary);
    std::mt19937 gen(12345);
    for (int i = 0; i < 4096; ++i) out.put(static_cast<char>(gen() & 0xff));
  }
  expect_runtime_error([&] { read_result_file(junk); }, {junk});
  std::string empty = path("empty.h5");
  std::ofstream{empty};
  expect_runtime_error([&] { read_result_file(empty); }, {empty});
  expect_runtime_error([&] { read_result_file(dir_); }, {dir_, "directory"});
}

// ----------------------------------------------------------------------------------------------
// Tables

namespace {
std::vector<Record> table_records() {
  Record a, b;
  a.set("suite", "hpcnn-train");
  a.set("model", "resnet50");
  a.set("batch", std::int64_t{32});
  a.set("img_per_s", 1234.5678);
  b.set("suite", "hpcnn-infer");
  b.set("model", "a|b,c");
  b.set("batch", std::int64_t{128});
  return {a, b};
}
const std::vector<std::string> kColumns = {"suite", "model", "batch", "img_per_s"};
}  // namespace

TEST(Table, Text) {
  EXPECT_EQ(render_table(table_records(), kColumns, TableFormat::Text),
            "suite        model     batch   img_per_s\n"
            "                              [images/s]\n"
            "hpcnn-train  resnet50     32      1234.6\n"
            "hpcnn-infer  a|b,c       128\n");
  // No unit line when no column has a unit.
  EXPECT_EQ(render_table(table_records(), {"batch", "model"}, TableFormat::Text),
            "batch  model\n"
            "   32  resnet50\n"
            "  128  a|b,c\n");
}

TEST(Table, Markdown) {
  EXPECT_EQ(render_table(table_records(), kColumns, TableFormat::Markdown),
            "| suite       | model    | batch | img_per_s [images/s] |\n"
            "| ----------- | -------- | ----: | -------------------: |\n"
            "| hpcnn-train | resnet50 |    32 |               1234.6 |\n"
            "| hpcnn-infer | a\\|b,c   |   128 |                      |\n");
}

TEST(Table, Csv) {
  EXPECT_EQ(render_table(table_records(), kColumns, TableFormat::Csv),
            "suite,model,batch,img_per_s\n"
            "hpcnn-train,resnet50,32,1234.5678\n"
            "hpcnn-infer,\"a|b,c\",128,\n");
  Record r;
  r.set("model", "say \"hi\"");
  r.set("iter_min_s", 1e-7);
  r.set("status_reason", " padded");
  EXPECT_EQ(render_table({r}, {"model", "iter_min_s", "status_reason"}, TableFormat::Csv),
            "model,iter_min_s,status_reason\n"
            "\"say \"\"hi\"\"\",1e-07,\" padded\"\n");
}

TEST(Table, TextStream) {
  TextTableStream table({"model", "batch", "img_per_s"});
  EXPECT_EQ(table.header(),
            "model        batch   img_per_s\n"
            "                    [images/s]\n");
  const auto records = table_records();
  EXPECT_EQ(table.row(records[0]), "resnet50        32      1234.6\n");
  EXPECT_EQ(table.row(records[1]), "a|b,c          128\n");
  EXPECT_THROW(TextTableStream({"nope"}), std::logic_error);
}

TEST(Table, EmptyAndOptions) {
  EXPECT_EQ(render_table({}, {"batch"}, TableFormat::Csv), "batch\n");
  EXPECT_EQ(render_table({}, {"batch"}, TableFormat::Text), "batch\n");
  EXPECT_THROW(render_table({}, {"nope"}, TableFormat::Text), std::logic_error);
  EXPECT_EQ(parse_table_format("markdown"), TableFormat::Markdown);
  EXPECT_EQ(parse_table_format("csv"), TableFormat::Csv);
  EXPECT_EQ(parse_table_format("text"), TableFormat::Text);
  EXPECT_FALSE(parse_table_format("html").has_value());
  EXPECT_EQ(parse_columns("suite,img_per_s"), (std::vector<std::string>{"suite", "img_per_s"}));
  EXPECT_THROW(parse_columns("suite,bogus"), UsageError);
  EXPECT_THROW(parse_columns("suite,,batch"), UsageError);
  EXPECT_THROW(parse_columns(""), UsageError);
}

// ----------------------------------------------------------------------------------------------
// Finding files

TEST_F(Results, FindResultFilesRecursiveSorted) {
  fs::create_directories(path("tree/b/deep"));
  fs::create_directories(path("tree/a"));
  for (const char* name : {"tree/z.h5", "tree/b/deep/x.h5", "tree/a/y.h5", "tree/a/notes.txt",
                           "tree/a/.run.h5.tmp", "tree/b/data.h5x"})
    std::ofstream(path(name)) << "x";
  std::vector<std::string> found = find_result_files({path("tree"), path("single.dat"), path("tree/a")});
  EXPECT_EQ(found, (std::vector<std::string>{path("tree/a/y.h5"), path("tree/b/deep/x.h5"), path("tree/z.h5"),
                                             path("single.dat"), path("tree/a/y.h5")}));
  EXPECT_TRUE(find_result_files({path("tree/b/deep/..")}).size() == 1);
  fs::create_directories(path("none"));
  EXPECT_TRUE(find_result_files({path("none")}).empty());
}

TEST(Fields, RolesOptionsAndArraysAreDeclaredOnce) {
  // Keys identify a point across runs (hpcnn-summary --compare matches on them).
  const std::vector<std::string> keys = key_fields();
  for (const char* k : {"suite", "model", "backend", "dataset", "mode", "batch", "threads", "ranks", "exchange",
                        "precision", "fusion", "lr", "optimizer"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
  for (const char* notkey : {"img_per_s", "iters", "seed", "status", "reproducer"})
    EXPECT_EQ(std::find(keys.begin(), keys.end(), notkey), keys.end()) << notkey;
  // An option sets at most one field, and only a setting comes from an option.
  std::set<std::string> options;
  for (const Field& f : fields()) {
    if (!*f.option) continue;
    EXPECT_NE(f.role, FieldRole::Figure) << f.name;
    EXPECT_TRUE(options.insert(f.option).second) << "option --" << f.option << " names two fields";
    EXPECT_EQ(field_of_option(f.option), &f);
  }
  ASSERT_NE(field_of_option("image-size"), nullptr);
  EXPECT_STREQ(field_of_option("image-size")->name, "image_size");
  EXPECT_STREQ(field_of_option("repeat")->name, "repeats");
  EXPECT_EQ(field_of_option("output"), nullptr);
  // Arrays: unique names, their units come with them, an undeclared one is a programming error.
  std::set<std::string> arrays;
  for (const ArrayField& a : array_fields()) EXPECT_TRUE(arrays.insert(a.name).second) << a.name;
  const Array a = make_array("iter_time_s", {2, 3}, std::vector<double>(6, 1.0));
  EXPECT_EQ(a.unit, "s");
  EXPECT_EQ(a.dims, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(make_array("repeat_img_per_s", {1}, {5.0}).unit, "images/s");
  EXPECT_THROW(make_array("no_such_array", {1}, {1.0}), std::logic_error);
}

// A damaged or hostile file may declare arrays far larger than it stores (an allocation of 2^40
// doubles) or dimensions whose product overflows (read as an empty array): one error naming the
// file and the dataset, no allocation.
TEST_F(Results, ArrayLargerThanTheFileIsRejected) {
  for (const std::vector<hsize_t>& dims : {std::vector<hsize_t>{hsize_t{1} << 40}, std::vector<hsize_t>{hsize_t{1} << 32, hsize_t{1} << 32}}) {
    std::string file = good_file();
    {
      RawFile raw(file);
      hid_t g = H5Gopen2(raw.id, "/points/000000", H5P_DEFAULT);
      ASSERT_GE(g, 0);
      hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
      ASSERT_GE(space, 0);
      hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
      const std::vector<hsize_t> chunk(dims.size(), 1);
      H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
      hid_t set = H5Dcreate2(g, "huge", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
      ASSERT_GE(set, 0);
      H5Dclose(set);
      H5Pclose(dcpl);
      H5Sclose(space);
      H5Gclose(g);
    }
    reseal(file);
    const std::string want = dims.size() == 1 ? "declares" : "overflow";
    expect_runtime_error([&] { read_result_file(file); }, {file, "dataset 'huge'", want});
  }
}

// A long series is stored as its log-bucketed histogram: the mean stays exact, every percentile
// and the stall share within the buckets' width, the counts whole; a short one is left as it is.
TEST_F(Results, LongSeriesBecomeHistogramsThatKeepMeanPercentilesAndStalls) {
  const std::size_t ranks = 3, n = 20000;
  std::mt19937 rng(7);
  std::lognormal_distribution<double> pace(std::log(3e-6), 0.2);
  std::vector<double> data(ranks * n);
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < n; ++i) data[r * n + i] = i % 50 == 7 ? 4e-4 : (i == 11 ? 0.0 : pace(rng));
  ResultPoint point;
  point.arrays.push_back(make_array("iter_time_s", {ranks, n}, data));
  point.arrays.push_back(make_array("warmup_time_s", {ranks, 5}, std::vector<double>(ranks * 5, 1e-3)));
  const std::optional<SeriesView> whole = read_series(point, "iter_time_s");
  ASSERT_TRUE(whole && whole->exact);
  bound_series(point);
  ASSERT_EQ(point.arrays.size(), 6u) << "warm-up kept whole, the series replaced by its five arrays in its place";
  EXPECT_EQ(point.arrays[0].name, "iter_time_s_bucket");
  EXPECT_EQ(point.arrays[5].name, "warmup_time_s");

  // Written and read back as any other arrays.
  point.record.set("status", "ok");
  std::string file;
  {
    ResultWriter writer(path("hist"), "hpcnn-allreduce");
    writer.add_point(point);
    file = writer.commit(Provenance{});
  }
  const ResultRun run = read_result_file(file);
  ASSERT_EQ(run.points.size(), 1u);
  const std::optional<SeriesView> hist = read_series(run.points[0], "iter_time_s");
  ASSERT_TRUE(hist);
  EXPECT_FALSE(hist->exact);
  ASSERT_EQ(hist->ranks, ranks);
  EXPECT_LT(fs::file_size(file), 40000u) << "not " << ranks * n * 8 << " bytes of times";
  for (std::size_t r = 0; r < ranks; ++r) {
    EXPECT_EQ(hist->count[r], n);
    EXPECT_DOUBLE_EQ(hist->mean(r), whole->mean(r)) << "the exact sum is kept";
    std::vector<double> a = whole->values[r], b = hist->values[r];
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    for (double q : {0.0, 5.0, 50.0, 95.0, 99.9, 100.0})
      EXPECT_NEAR(percentile(b, q), percentile(a, q), 0.0055 * percentile(a, q) + 1e-12) << "rank " << r << " p" << q;
  }
  EXPECT_DOUBLE_EQ(hist->slowest_sum, whole->slowest_sum);
  ASSERT_EQ(hist->slowest.size(), n);
  EXPECT_NEAR(stall_share(hist->slowest), stall_share(whole->slowest), 0.01);
  EXPECT_GT(stall_share(whole->slowest), 0.5) << "the test's stalls must be there to be kept";

  // Every value lies in its bucket: the edges contain what they count.
  const Array& edges = run.points[0].arrays[0];
  ASSERT_EQ(edges.name, "iter_time_s_bucket");
  EXPECT_EQ(edges.data.front(), 0.0) << "a zero has the bucket [0, 2^-40)";
  for (std::size_t k = 0; k + 1 < edges.dims[0]; ++k) {
    EXPECT_LT(edges.data[2 * k], edges.data[2 * k + 1]);
    EXPECT_LE(edges.data[2 * k + 1], edges.data[2 * k + 2]) << "buckets ascend and do not overlap";
    if (edges.data[2 * k] > 0) EXPECT_NEAR(edges.data[2 * k + 1] / edges.data[2 * k], std::exp2(1.0 / 64), 1e-12);
  }

  // A short series, or one with a value that is not a time, stays whole.
  ResultPoint short_point, odd_point;
  short_point.arrays.push_back(make_array("iter_time_s", {2, kSeriesKeptPerRank}, std::vector<double>(2 * kSeriesKeptPerRank, 1.0)));
  bound_series(short_point);
  EXPECT_EQ(short_point.arrays.size(), 1u);
  std::vector<double> odd(kSeriesKeptPerRank + 1, 1.0);
  odd[3] = std::numeric_limits<double>::quiet_NaN();
  odd_point.arrays.push_back(make_array("call_time_s", {1, odd.size()}, odd));
  bound_series(odd_point);
  EXPECT_EQ(odd_point.arrays[0].name, "call_time_s");
}

// A damaged histogram is no series: counts that are not whole numbers, or shapes that disagree.
TEST_F(Results, DamagedHistogramIsNoSeries) {
  ResultPoint point;
  point.arrays.push_back(make_array("call_time_s", {1, kSeriesKeptPerRank + 5}, std::vector<double>(kSeriesKeptPerRank + 5, 2e-4)));
  bound_series(point);
  ASSERT_TRUE(read_series(point, "call_time_s"));
  ResultPoint fraction = point, shape = point, negative = point;
  fraction.arrays[1].data[0] = 0.5;
  EXPECT_FALSE(read_series(fraction, "call_time_s"));
  shape.arrays[1].dims = {2, shape.arrays[1].dims[1]};
  EXPECT_FALSE(read_series(shape, "call_time_s"));
  negative.arrays[0].data[0] = -1;
  EXPECT_FALSE(read_series(negative, "call_time_s"));
  EXPECT_FALSE(read_series(point, "iter_time_s")) << "a series the point does not have";
}
