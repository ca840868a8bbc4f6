// granary real up|run|verify|calibrate|down SCENARIO.json: a real-mode cluster of daemons for the
// scenario (realmode/launcher.h, realmode/README.md, "granary real"). `run` and `verify` print
// the report (JSON, "mode": "real") on stdout or to --report; `calibrate` the calibration
// (realmode/calibration.h) and, with --scenario-out, the calibrated scenario. Exit status: 0 done,
// 1 the run or the verification failed or an expectation does not hold, 2 bad input (the scenario,
// a cluster that is not up, or already up).
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "realmode/launcher.h"

namespace granary::cli {

namespace {

struct RealArgs {
  std::string scenario, report;
};

// The input errors (exit 2) among a launcher's failures: what the user must change.
bool input_error(const Status& s) {
  return s.code() == Status::Code::kInvalidArgument || s.code() == Status::Code::kNotFound ||
         s.code() == Status::Code::kPermissionDenied;
}

void finish(ExitCode& code, const Status& s) {
  if (s.ok()) return;
  std::cerr << "granary: " << s.message() << "\n";
  code.value = input_error(s) ? 2 : 1;
}

void print_report(ExitCode& code, const RealArgs& a, const nlohmann::json& report) {
  const std::string text = report.dump(2) + "\n";
  if (a.report.empty()) {
    std::cout << text;
    return;
  }
  std::ofstream out(a.report);
  out << text;
  if (!out) finish(code, Status::io_error(a.report + ": cannot write the report"));
}

}  // namespace

void register_real_commands(CLI::App& app, ExitCode& code) {
  CLI::App* real = app.add_subcommand(
      "real", "Bring up a real-mode cluster of daemons for a scenario, run it, verify, remove it");
  real->require_subcommand(1);
  auto add = [&](const char* name, const char* what, bool with_report) {
    auto args = std::make_shared<RealArgs>();
    CLI::App* cmd = real->add_subcommand(name, what);
    cmd->add_option("scenario", args->scenario, "the scenario (JSON; its `real` section)")
        ->required();
    if (with_report) cmd->add_option("--report", args->report, "where the report goes");
    return std::make_pair(cmd, args);
  };
  auto [up, up_args] =
      add("up", "Make the hosts, write the cluster file, start the daemons", false);
  up->callback([a = up_args, &code] {
    finish(code, realmode::real_up({a->scenario, &std::cerr}));
  });
  auto [run, run_args] =
      add("run", "Run the scenario's workload with its failures injected; print the report", true);
  run->callback([a = run_args, &code] {
    int failed = 0;
    Result<nlohmann::json> r = realmode::real_run({a->scenario, &std::cerr}, &failed);
    if (!r.ok()) return finish(code, r.status());
    print_report(code, *a, *r);
    if (failed > 0) {
      std::cerr << "granary: " << failed << " expectation(s) do not hold\n";
      code.value = 1;
    }
  });
  auto [verify, verify_args] =
      add("verify", "Read every file back and compare it with what was written", true);
  verify->callback([a = verify_args, &code] {
    Result<nlohmann::json> r = realmode::real_verify({a->scenario, &std::cerr});
    if (!r.ok()) return finish(code, r.status());
    print_report(code, *a, *r);
  });
  auto [calibrate, calibrate_args] =
      add("calibrate",
          "Measure the drive and the cluster's costs per request; print the calibration and "
          "write the scenario calibrated with them",
          true);
  auto calibrate_options = std::make_shared<realmode::CalibrateOptions>();
  auto scenario_out = std::make_shared<std::string>();
  calibrate->add_option("--scenario-out", *scenario_out,
                        "where the calibrated scenario goes (JSON: the scenario with the "
                        "measured drive and protocol figures as overrides)");
  calibrate
      ->add_option("--probe-seconds", calibrate_options->probe_seconds,
                   "each cluster probe's measured window (s)")
      ->check(CLI::Range(0.1, 3600.0));
  calibrate
      ->add_option("--drive-seconds", calibrate_options->drive_seconds,
                   "each mode of the drive probe (s)")
      ->check(CLI::Range(0.1, 3600.0));
  calibrate->callback([a = calibrate_args, co = calibrate_options, out = scenario_out, &code] {
    Result<nlohmann::json> r = realmode::real_calibrate({a->scenario, &std::cerr}, *co);
    if (!r.ok()) return finish(code, r.status());
    if (!out->empty()) {
      std::ofstream f(*out);
      f << (*r)["calibrated_scenario"].dump(2) << "\n";
      if (!f) return finish(code, Status::io_error(*out + ": cannot write the scenario"));
    }
    print_report(code, *a, *r);
  });
  auto [down, down_args] =
      add("down", "Stop the daemons, delete the namespaces, remove the folder", false);
  down->callback([a = down_args, &code] {
    finish(code, realmode::real_down({a->scenario, &std::cerr}));
  });
}

}  // namespace granary::cli
