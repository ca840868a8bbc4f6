#include "engine/crush/tester.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/crush/hash.h"
#include "engine/crush/mapper.h"

namespace granary::crush {

uint32_t reweight_from_float(float w) {
  const int v = static_cast<int>(w * static_cast<float>(kWeightOne));
  return static_cast<uint32_t>(std::clamp(v, 0, static_cast<int>(kWeightOne)));
}

namespace {

// Upper bound on the replicas a rule can place, computed as crushtool does for its
// "expected" column: the smallest of the requested counts and the number of buckets of
// each type the rule chooses (shadow buckets included).
int max_affected_by_rule(const CrushMap& map, const Rule& rule) {
  std::vector<int> types;
  std::map<int, int> requested;
  for (const RuleStep& s : rule.steps) {
    const int op = static_cast<int>(s.op);
    if (op >= 2 && op != 4) {
      types.push_back(s.arg2);
      requested[s.arg2] = s.arg1;
    }
  }
  std::map<int, int> have;
  for (int t : types) {
    for (const auto& [id, name] : map.item_names()) {
      if (const Bucket* b = map.bucket(id); b && b->type == t) ++have[t];
    }
  }
  for (int t : types) {
    if (requested[t] > 0 && requested[t] < have[t]) have[t] = requested[t];
  }
  int best = std::max(map.max_buckets(), map.max_devices());
  for (int t : types) {
    if (have[t] > 0 && have[t] < best) best = have[t];
  }
  return best;
}

void print_vector(std::ostream& out, const std::vector<int32_t>& v) {
  out << '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out << ',';
    out << v[i];
  }
  out << ']';
}

}  // namespace

Status run_crush_test(const CrushMap& map, const TestOptions& o, std::ostream& out) {
  if (o.rule && !map.rule(*o.rule)) {
    return Status::invalid_argument("--rule " + std::to_string(*o.rule) +
                                    ": the map has no such rule");
  }
  if (o.min_x > o.max_x) {
    return Status::invalid_argument("--min-x " + std::to_string(o.min_x) + " is above --max-x " +
                                    std::to_string(o.max_x));
  }
  if (o.num_rep && *o.num_rep < 1) {
    return Status::invalid_argument("--num-rep must be >= 1, got " + std::to_string(*o.num_rep));
  }
  std::vector<uint32_t> weight(map.max_devices());
  const std::vector<uint32_t> present = default_device_weights(map);
  for (int32_t d = 0; d < map.max_devices(); ++d) {
    auto it = o.weights.find(d);
    weight[d] = it != o.weights.end() ? reweight_from_float(it->second) : present[d];
  }
  const ChooseArgs* choose_args = map.choose_args_for(o.choose_args_index);
  Mapper mapper(map);
  const int32_t first_rule = o.rule.value_or(0);
  const int32_t last_rule = o.rule.value_or(map.max_rules() - 1);
  std::vector<int32_t> result;
  std::string line;
  for (int32_t r = first_rule; r <= last_rule && r < map.max_rules(); ++r) {
    const Rule* rule = map.rule(r);
    if (!rule) {
      if (o.show_statistics) out << "rule " << r << " dne\n";
      continue;
    }
    const int minr = o.num_rep.value_or(rule->min_size);
    const int maxr = o.num_rep.value_or(rule->max_size);
    if (o.show_statistics) {
      out << "rule " << r << " (" << rule->name << "), x = " << o.min_x << ".." << o.max_x
          << ", numrep = " << minr << ".." << maxr << "\n";
    }
    for (int nr = minr; nr <= maxr; ++nr) {
      std::vector<int> per(map.max_devices(), 0);
      std::map<int, int> sizes;
      int total_weight = 0;
      for (uint32_t w : weight) total_weight += static_cast<int>(w);
      if (total_weight == 0) continue;
      const int num_objects = o.max_x - o.min_x + 1;
      const float expected_objects =
          static_cast<float>(std::min(nr, max_affected_by_rule(map, *rule)) * num_objects);
      result.resize(nr);
      for (int32_t x = o.min_x; x <= o.max_x; ++x) {
        uint32_t real_x = static_cast<uint32_t>(x);
        if (o.pool_id) real_x = crush_hash32_2(real_x, *o.pool_id);
        const int n = mapper.do_rule(r, static_cast<int32_t>(real_x), result, weight, choose_args);
        const std::vector<int32_t> got(result.begin(), result.begin() + n);
        if (o.show_mappings) {
          out << "CRUSH rule " << r << " x " << x << " ";
          print_vector(out, got);
          out << "\n";
        }
        bool has_none = false;
        for (int32_t item : got) {
          if (item == kItemNone) {
            has_none = true;
          } else if (item >= 0 && item < map.max_devices()) {
            ++per[item];
          }
        }
        ++sizes[n];
        if (o.show_bad_mappings && (n != nr || has_none)) {
          out << "bad mapping rule " << r << " x " << x << " num_rep " << nr << " result ";
          print_vector(out, got);
          out << "\n";
        }
      }
      if (o.show_utilization && !o.show_statistics) {
        for (size_t i = 0; i < per.size(); ++i) out << "  device " << i << ":\t" << per[i] << "\n";
      }
      if (o.show_statistics) {
        for (const auto& [size, count] : sizes) {
          out << "rule " << r << " (" << rule->name << ") num_rep " << nr
              << " result size == " << size << ":\t" << count << "/" << num_objects << "\n";
        }
        for (size_t i = 0; i < per.size(); ++i) {
          const float proportional =
              static_cast<float>(weight[i]) / static_cast<float>(total_weight);
          const float expected = proportional * expected_objects;
          if (o.show_utilization) {
            if (expected > 0 && per[i] > 0) {
              out << "  device " << i << ":\t\t stored : " << per[i] << "\t expected : " << expected
                  << "\n";
            }
          } else if (o.show_utilization_all) {
            out << "  device " << i << ":\t\t stored : " << per[i] << "\t expected : " << expected
                << "\n";
          }
        }
      }
    }
  }
  out.flush();
  return Status();
}

}  // namespace granary::crush
