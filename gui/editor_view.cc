// The scenario editor (editor_view.h).
#include "gui/editor_view.h"

#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QTabBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "gui/editor_tables.h"
#include "gui/form_fields.h"
#include "models/catalog.h"

namespace granary::gui {

namespace {

QStringList qt_list(const std::vector<std::string>& names) {
  QStringList out;
  for (const std::string& n : names) out << QString::fromStdString(n);
  return out;
}

FieldSpec num(std::string key, QString label, QString default_text, QString tooltip = {}) {
  return {std::move(key),    std::move(label), FieldKind::kNumber, std::move(default_text), {},
          std::move(tooltip)};
}
FieldSpec text(std::string key, QString label, QString default_text, QString tooltip = {}) {
  return {std::move(key),    std::move(label), FieldKind::kText, std::move(default_text), {},
          std::move(tooltip)};
}
FieldSpec choice(std::string key, QString label, QStringList choices, QString default_text,
                 QString tooltip = {}) {
  return {std::move(key),          std::move(label),   FieldKind::kChoice,
          std::move(default_text), std::move(choices), std::move(tooltip)};
}
FieldSpec flag(std::string key, QString label, QString default_text, QString tooltip = {}) {
  return {std::move(key),    std::move(label), FieldKind::kBool, std::move(default_text), {},
          std::move(tooltip)};
}
FieldSpec profile(std::string key, QString label, QStringList choices, QString tooltip = {}) {
  return {std::move(key),     std::move(label),  FieldKind::kProfile, {},
          std::move(choices), std::move(tooltip)};
}

// A scrollable page holding `inner`.
QWidget* scrolled(QWidget* inner) {
  auto* area = new QScrollArea;
  area->setWidget(inner);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  return area;
}

QGroupBox* group(const QString& title, FieldSet* fields, const std::vector<FieldSpec>& specs) {
  auto* box = new QGroupBox(title);
  auto* form = new QFormLayout(box);
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  fields->add_rows(form, specs);
  return box;
}

const QStringList kDesigns = {"rados", "pfs", "nfs", "local"};

}  // namespace

EditorView::EditorView(ScenarioDocument* doc, QWidget* parent)
    : QWidget(parent),
      doc_(doc),
      fields_(new FieldSet(doc, this)),
      workload_fields_(new FieldSet(doc, this)) {
  tabs_ = new QTabWidget;
  tabs_->addTab(build_cluster_tab(), tr("Cluster"));
  tabs_->addTab(build_fabric_tab(), tr("Fabric"));
  tabs_->addTab(build_storage_tab(), tr("Storage design"));
  tabs_->addTab(build_workloads_tab(), tr("Workloads"));
  failures_ = new FailuresTable(doc);
  tabs_->addTab(failures_, tr("Failures"));
  expectations_ = new ExpectationsTable(doc);
  tabs_->addTab(expectations_, tr("Expectations"));
  tabs_->addTab(build_scenario_tab(), tr("Scenario && simulation"));
  tabs_->addTab(build_raw_tab(), tr("Raw JSON"));
  status_ = new QLabel;
  status_->setObjectName("validation_status");
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setContentsMargins(6, 4, 6, 4);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(tabs_, 1);
  layout->addWidget(status_);

  fields_->set_edits_for("/storage/design",
                         [this](const std::optional<Json>& v) { return design_edits(v); });
  workload_fields_->set_edits_for(
      "/type", [this](const std::optional<Json>& v) { return workload_type_edits(v); });
  validate_timer_.setSingleShot(true);
  validate_timer_.setInterval(250);
  connect(&validate_timer_, &QTimer::timeout, doc_, [this] { doc_->validate(); });
  connect(doc_, &ScenarioDocument::changed, this, [this] {
    refresh();
    validate_timer_.start();
  });
  connect(doc_, &ScenarioDocument::validated, this, &EditorView::show_validation);
  connect(doc_, &ScenarioDocument::catalog_changed, this, &EditorView::update_profile_lists);
  refresh();
}

void EditorView::update_profile_lists() {
  const models::Catalog& c = doc_->catalog();
  fields_->set_choices("/cluster/clients/accelerator", qt_list(c.accelerator_names()));
  fields_->set_choices("/cluster/clients/nic", qt_list(c.nic_names()));
  fields_->set_choices("/cluster/storage/drive", qt_list(c.drive_names()));
  fields_->set_choices("/cluster/storage/nic", qt_list(c.nic_names()));
  fields_->set_choices("/cluster/storage/profile", qt_list(c.server_names()));
  fields_->set_choices("/cluster/fabric/switch", qt_list(c.switch_names()));
}

QWidget* EditorView::build_scenario_tab() {
  auto* page = new QWidget;
  auto* v = new QVBoxLayout(page);
  v->addWidget(group(tr("Scenario"), fields_,
                     {text("/name", tr("Name"), tr("the file name")),
                      text("/description", tr("Description"), "\"\""),
                      num("/seed", tr("Seed"), "1", tr("seed of every random choice of a run"))}));
  v->addWidget(
      group(tr("Simulation"), fields_,
            {choice("/simulation/fidelity", tr("Fidelity"), {"auto", "request", "slice"}, "auto"),
             num("/simulation/representative_nodes", tr("Representative nodes (slice)"), "8"),
             num("/simulation/max_simulated_s", tr("Max simulated time (s)"), "3600"),
             flag("/simulation/stop_at_steady_state", tr("Stop at steady state"), "true"),
             num("/simulation/steady_state_tolerance", tr("Steady-state tolerance"), "0.01"),
             num("/simulation/transfer_unit_mib", tr("Transfer unit (MiB, slice)"), "16"),
             flag("/simulation/carry_data", tr("Carry data"), tr("automatic"))}));
  v->addStretch();
  return scrolled(page);
}

QWidget* EditorView::build_cluster_tab() {
  const QStringList nics = qt_list(doc_->catalog().nic_names());
  auto* page = new QWidget;
  auto* h = new QHBoxLayout(page);
  auto* left = new QVBoxLayout;
  auto* right = new QVBoxLayout;
  left->addWidget(group(
      tr("Client (GPU) nodes"), fields_,
      {num("/cluster/clients/count", tr("Nodes"), "", tr("client nodes, 1..65536")),
       num("/cluster/clients/accelerators_per_node", tr("Accelerators per node"), "8"),
       profile("/cluster/clients/accelerator", tr("Accelerator model"),
               qt_list(doc_->catalog().accelerator_names())),
       profile("/cluster/clients/nic", tr("NIC model"), nics),
       num("/cluster/clients/nic/count", tr("NICs per node"), "1"),
       num("/cluster/clients/nic/gbps", tr("NIC port rate (Gb/s)"), tr("profile")),
       num("/cluster/clients/nic/ports", tr("Ports per NIC"), tr("profile")),
       num("/cluster/clients/memory_gib", tr("Memory (GiB)"), "1024"),
       num("/cluster/clients/memory_bandwidth_gbytes_per_s", tr("Memory bandwidth (GB/s)"), "200"),
       flag("/cluster/clients/gpudirect_storage", tr("GPUDirect Storage"), "false")}));
  left->addStretch();
  right->addWidget(group(
      tr("Storage servers"), fields_,
      {num("/cluster/storage/count", tr("Servers"), "", tr("storage servers")),
       choice("/cluster/storage/profile", tr("Server model"),
              qt_list(doc_->catalog().server_names()), tr("none"),
              tr("a server profile: its CPU cores and internal limit unless given below; no "
                 "more drives than its bays nor NICs than its slots")),
       profile("/cluster/storage/drive", tr("Drive model"), qt_list(doc_->catalog().drive_names())),
       num("/cluster/storage/drive/count", tr("Drives per server"), "1"),
       num("/cluster/storage/drive/capacity_tb", tr("Drive capacity (TB)"), tr("profile")),
       profile("/cluster/storage/nic", tr("NIC model"), nics),
       num("/cluster/storage/nic/count", tr("NICs per server"), "1"),
       num("/cluster/storage/nic/gbps", tr("NIC port rate (Gb/s)"), tr("profile")),
       num("/cluster/storage/cpu_cores", tr("CPU cores"), tr("32, or the server's")),
       num("/cluster/storage/server_gbytes_per_s", tr("Server internal limit (GB/s)"),
           tr("0, or the server's"), tr("0: only the NICs and drives limit"))}));
  right->addStretch();
  h->addLayout(left, 1);
  h->addLayout(right, 1);
  return scrolled(page);
}

QWidget* EditorView::build_fabric_tab() {
  auto* page = new QWidget;
  auto* v = new QVBoxLayout(page);
  v->addWidget(group(
      tr("Fabric"), fields_,
      {choice("/cluster/fabric/topology", tr("Topology"),
              {"leaf-spine", "fat-tree", "rail-optimized"}, "leaf-spine"),
       choice("/cluster/fabric/switch", tr("Leaf switch model"),
              qt_list(doc_->catalog().switch_names()), tr("none"),
              tr("a switch profile: its port rate and latency unless given below; every leaf "
                 "needs the ports its hosts and uplinks use")),
       num("/cluster/fabric/link_gbps", tr("Switch link rate (Gb/s)"), tr("400, or the switch's")),
       num("/cluster/fabric/link_latency_us", tr("Latency per hop (µs)"),
           tr("1.0, or the switch's + 0.05")),
       num("/cluster/fabric/hosts_per_leaf", tr("Hosts per leaf"), "16"),
       num("/cluster/fabric/uplinks_per_leaf", tr("Uplinks per leaf"), "8",
           tr("0: derived from the oversubscription")),
       num("/cluster/fabric/oversubscription", tr("Oversubscription"), "1.0"),
       num("/cluster/fabric/spines", tr("Spines"), "0"),
       num("/cluster/fabric/pods", tr("Pods (fat-tree)"), "0"),
       num("/cluster/fabric/leaves_per_pod", tr("Leaves per pod (fat-tree)"), "0"),
       num("/cluster/fabric/rails", tr("Rails (rail-optimized)"), "0"),
       flag("/cluster/fabric/storage_on_own_leaves", tr("Storage on its own leaves"), "true")}));
  v->addStretch();
  return scrolled(page);
}

QWidget* EditorView::build_storage_tab() {
  auto* page = new QWidget;
  auto* v = new QVBoxLayout(page);
  QStringList protocols;
  for (auto d : {models::StorageDesign::kRados, models::StorageDesign::kPfs,
                 models::StorageDesign::kNfs, models::StorageDesign::kLocal}) {
    for (const std::string& p : models::protocols_for_design(d))
      protocols << QString::fromStdString(p);
  }
  v->addWidget(group(
      tr("Design"), fields_,
      {choice("/storage/design", tr("Design"), kDesigns, ""),
       profile("/storage/protocol", tr("Protocol"), protocols),
       num("/storage/protocol/efficiency", tr("Protocol efficiency"), tr("profile")),
       num("/storage/protocol/message_latency_us", tr("Message latency (µs)"), tr("profile"))}));
  auto add_design = [&](const QString& design, const QString& title,
                        const std::vector<FieldSpec>& specs) {
    QGroupBox* box = group(title, fields_, specs);
    design_groups_.emplace_back(design, box);
    v->addWidget(box);
  };
  add_design("rados", tr("RADOS pool"),
             {num("/storage/rados/pg_num", tr("Placement groups"), "4096"),
              num("/storage/rados/replicas", tr("Replicas"), "3"),
              num("/storage/rados/erasure/k", tr("Erasure coding k (data)"), tr("none")),
              num("/storage/rados/erasure/m", tr("Erasure coding m (coding)"), tr("none")),
              num("/storage/rados/object_size_mib", tr("Object size (MiB)"), "4"),
              num("/storage/rados/inflight_objects", tr("Objects in flight per file"), "2"),
              text("/storage/rados/crush_map", tr("CRUSH map file"), tr("generated")),
              num("/storage/rados/crush_rule", tr("CRUSH rule"), "0"),
              num("/storage/rados/stored_tib", tr("Stored data (TiB, failures)"), "0")});
  add_design("pfs", tr("Parallel file system"),
             {num("/storage/pfs/stripe_size_mib", tr("Stripe size (MiB)"), "1"),
              num("/storage/pfs/stripe_count", tr("Stripe count (-1: all)"), "1"),
              num("/storage/pfs/osts_per_server", tr("OSTs per server"), "0"),
              num("/storage/pfs/inflight_rpcs", tr("RPCs in flight per file"), "8"),
              num("/storage/pfs/mds/count", tr("Metadata servers"), "1"),
              num("/storage/pfs/mds/ops_per_s", tr("MDS operations/s"), "50000"),
              num("/storage/pfs/mds/latency_us", tr("MDS latency (µs)"), "200")});
  add_design("nfs", tr("NFS filer"),
             {num("/storage/nfs/rsize_kib", tr("Read size (KiB)"), "1024"),
              num("/storage/nfs/inflight_rpcs", tr("RPCs in flight per file"), "16"),
              num("/storage/nfs/mount_gbytes_per_s", tr("Mount limit (GB/s)"), "0")});
  add_design("local", tr("Node-local drives"),
             {num("/storage/local/io_kib", tr("I/O size (KiB)"), "1024"),
              num("/storage/local/inflight_ios", tr("I/Os in flight per file"), "8")});
  v->addStretch();
  return scrolled(page);
}

// The selected workload's form: its name, type and preset, and a group per type.
QWidget* EditorView::build_workload_form() {
  workload_form_ = new QWidget;
  auto* v = new QVBoxLayout(workload_form_);
  const QStringList presets = qt_list(models::mlperf_workload_names()) +
                              QStringList{"llama3-8b", "llama3-70b", "llama3-405b", "llama3-1t"};
  v->addWidget(
      group(tr("Workload"), workload_fields_,
            {text("/name", tr("Name"), tr("the preset's name")),
             choice("/type", tr("Type"), {"training_read", "checkpoint", "block", "boot_storm"},
                    "training_read"),
             choice("/mlperf", tr("MLPerf Storage preset"), presets, tr("none"))}));
  auto add_type = [&](const QString& type, const QString& title, const std::vector<FieldSpec>& s) {
    QGroupBox* box = group(title, workload_fields_, s);
    workload_groups_.emplace_back(type, box);
    v->addWidget(box);
  };
  add_type("training_read", tr("Training read"),
           {num("/files", tr("Files"), tr("preset")),
            num("/samples_per_file", tr("Samples per file"), tr("preset, else 1")),
            num("/sample_size_mib/mean", tr("Sample size mean (MiB)"), tr("preset")),
            num("/sample_size_mib/stddev", tr("Sample size stddev (MiB)"), "0"),
            num("/batch_size", tr("Batch size"), tr("preset, else 1")),
            num("/read_threads", tr("Reader threads"), tr("preset, else 1")),
            num("/prefetch_batches", tr("Prefetch batches"), "2"),
            num("/compute_s_per_step", tr("Compute per step (s)"), tr("accelerator's")),
            num("/decode_cpu_us_per_sample", tr("Decode CPU per sample (µs)"), "0"),
            num("/epochs", tr("Epochs"), tr("preset (5), else 1")),
            num("/au_threshold", tr("AU threshold"), tr("preset, else 0.9")),
            text("/file_format", tr("File format"), tr("preset"))});
  add_type("checkpoint", tr("Checkpoint"),
           {num("/model_gb", tr("Model (GB)"), tr("preset")),
            num("/optimizer_gb", tr("Optimizer state (GB)"), tr("preset")),
            num("/tensor_parallel", tr("Tensor parallel"), tr("preset, else 1")),
            num("/pipeline_parallel", tr("Pipeline parallel"), tr("preset, else 1")),
            num("/data_parallel", tr("Data parallel"), tr("preset, else 1")),
            num("/checkpoints", tr("Checkpoints"), "1"),
            flag("/read_back", tr("Read back"), "true"), flag("/fsync", tr("fsync"), "true"),
            num("/start_s", tr("Start (s, beside a training read)"), "0")});
  const std::vector<FieldSpec> volume = {
      num("/volume/size_gib", tr("Volume size (GiB)"), "64"),
      num("/volume/object_size_mib", tr("Object size (MiB)"), "4"),
      flag("/volume/clone", tr("Clones of one image"), "false"),
      num("/nodes", tr("Nodes (0: all)"), "0"),
      num("/block_size_kib", tr("Block size (KiB)"), "4"),
      num("/queue_depth", tr("Queue depth"), "32")};
  std::vector<FieldSpec> block = volume;
  for (auto s : {num("/read_fraction", tr("Read fraction"), "1"),
                 num("/rate_iops", tr("Rate limit (IOPS)"), "0"),
                 num("/duration_s", tr("Measured window (s)"), "1"),
                 num("/ramp_s", tr("Ramp (s)"), "0.1")}) {
    block.push_back(s);
  }
  add_type("block", tr("Block I/O"), block);
  // The boot storm shares the volume keys: its group holds only its own.
  add_type("boot_storm", tr("Boot storm"),
           {num("/boot_read_mib", tr("Boot read per node (MiB)"), "256"),
            num("/boot_write_mib", tr("Boot write per node (MiB)"), "0")});
  v->addStretch();
  return workload_form_;
}

QWidget* EditorView::build_workloads_tab() {
  auto* page = new QWidget;
  auto* h = new QHBoxLayout(page);
  auto* left = new QVBoxLayout;
  workload_list_ = new QListWidget;
  workload_list_->setMaximumWidth(260);
  left->addWidget(workload_list_);
  auto* add = new QToolButton;
  add->setText(tr("Add"));
  add->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(add);
  for (const char* type : {"training_read", "checkpoint", "block", "boot_storm"}) {
    menu->addAction(type, this, [this, type] { add_workload(type); });
  }
  add->setMenu(menu);
  auto* remove = new QPushButton(tr("Remove"));
  connect(remove, &QPushButton::clicked, this, &EditorView::remove_workload);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(add);
  buttons->addWidget(remove);
  left->addLayout(buttons);
  h->addLayout(left);

  h->addWidget(scrolled(build_workload_form()), 1);
  connect(workload_list_, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row < 0) return;
    workload_fields_->set_base(JsonPointer("/workloads/" + std::to_string(row)));
    refresh_workloads();
    show_validation(doc_->validation());
  });
  return page;
}

QWidget* EditorView::build_raw_tab() {
  auto* page = new QWidget;
  auto* v = new QVBoxLayout(page);
  raw_ = new QPlainTextEdit;
  raw_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  raw_->setLineWrapMode(QPlainTextEdit::NoWrap);
  raw_error_ = new QLabel;
  raw_error_->setStyleSheet("color: #c62828;");
  raw_error_->setWordWrap(true);
  v->addWidget(raw_, 1);
  v->addWidget(raw_error_);
  raw_timer_.setSingleShot(true);
  raw_timer_.setInterval(500);
  connect(&raw_timer_, &QTimer::timeout, this, &EditorView::apply_raw_text);
  connect(raw_, &QPlainTextEdit::textChanged, this, [this] {
    if (!updating_raw_) raw_timer_.start();
  });
  return page;
}

std::vector<Edit> EditorView::design_edits(const std::optional<Json>& design) const {
  std::vector<Edit> edits = {{JsonPointer("/storage/design"), design}};
  // The other designs' sections are errors beside the chosen one; a protocol of another design
  // too: both go.
  for (const QString& d : kDesigns) {
    if (!design || d.toStdString() != design->get<std::string>()) {
      edits.push_back({JsonPointer("/storage/" + d.toStdString()), std::nullopt});
    }
  }
  const Json& doc = doc_->json();
  const JsonPointer protocol("/storage/protocol");
  if (design && doc.contains(protocol)) {
    const Json& p = doc.at(protocol);
    const std::string name = p.is_object()   ? p.value("profile", "")
                             : p.is_string() ? p.get<std::string>()
                                             : "";
    bool fits = false;
    for (auto d : {models::StorageDesign::kRados, models::StorageDesign::kPfs,
                   models::StorageDesign::kNfs, models::StorageDesign::kLocal}) {
      if (models::storage_design_name(d) != design->get<std::string>()) continue;
      for (const std::string& q : models::protocols_for_design(d)) fits = fits || q == name;
    }
    if (!fits) edits.push_back({protocol, std::nullopt});
  }
  return edits;
}

std::vector<Edit> EditorView::workload_type_edits(const std::optional<Json>& type) const {
  const JsonPointer base = workload_fields_->base();
  std::vector<Edit> edits = {{base / "type", type}};
  const QString to = type ? QString::fromStdString(type->get<std::string>()) : "training_read";
  // Keys of the other types' groups are refused on this one: they go, with the preset.
  edits.push_back({base / "mlperf", std::nullopt});
  for (const auto& [t, box] : workload_groups_) {
    const bool shared = (to == "boot_storm" && t == "block");  // the volume keys
    if (t == to || shared) continue;
    for (const Field& f : workload_fields_->fields()) {
      if (!box->isAncestorOf(f.editor)) continue;
      JsonPointer key(f.spec.key);
      while (!key.parent_pointer().empty()) key = key.parent_pointer();  // top key ("/volume")
      if (to == "boot_storm" &&
          (key.to_string() == "/volume" || key.to_string() == "/nodes" ||
           key.to_string() == "/block_size_kib" || key.to_string() == "/queue_depth")) {
        continue;
      }
      edits.push_back({base / key, std::nullopt});
    }
  }
  return edits;
}

void EditorView::add_workload(const QString& type) {
  Json list = doc_->json().value("workloads", Json::array());
  Json w = {{"name", type.toStdString() + std::to_string(list.size() + 1)}};
  if (type != "training_read") w["type"] = type.toStdString();
  if (type == "training_read") w["mlperf"] = "unet3d";
  if (type == "checkpoint") w["mlperf"] = "llama3-8b";
  list.push_back(w);
  doc_->apply({{JsonPointer("/workloads"), list}}, tr("Add workload"));
  select_workload(static_cast<int>(list.size()) - 1);
}

void EditorView::remove_workload() {
  const int row = selected_workload();
  Json list = doc_->json().value("workloads", Json::array());
  if (row < 0 || static_cast<size_t>(row) >= list.size()) return;
  list.erase(list.begin() + row);
  doc_->apply({{JsonPointer("/workloads"), list}}, tr("Remove workload"));
}

void EditorView::select_workload(int index) {
  workload_list_->setCurrentRow(index);
}

int EditorView::selected_workload() const {
  return workload_list_->currentRow();
}

void EditorView::refresh() {
  fields_->refresh();
  const Json& doc = doc_->json();
  const std::string design = doc.value(JsonPointer("/storage/design"), std::string());
  for (const auto& [d, box] : design_groups_) box->setVisible(d.toStdString() == design);
  refresh_workloads();
  failures_->refresh();
  expectations_->refresh();
  refresh_raw();
}

void EditorView::refresh_workloads() {
  const Json& doc = doc_->json();
  const Json list =
      doc.contains("workloads") && doc["workloads"].is_array() ? doc["workloads"] : Json::array();
  {
    const QSignalBlocker block(workload_list_);
    const int keep = workload_list_->currentRow();
    workload_list_->clear();
    for (const Json& w : list) {
      const QString name = w.is_object() && w.contains("name")     ? text_of(w["name"])
                           : w.is_object() && w.contains("mlperf") ? text_of(w["mlperf"])
                                                                   : tr("(unnamed)");
      const QString type =
          w.is_object() ? QString::fromStdString(w.value("type", "training_read")) : QString();
      workload_list_->addItem(QString("%1  (%2)").arg(name, type));
    }
    const int n = static_cast<int>(list.size());
    workload_list_->setCurrentRow(n == 0 ? -1 : std::clamp(keep < 0 ? 0 : keep, 0, n - 1));
  }
  const int row = workload_list_->currentRow();
  workload_form_->setEnabled(row >= 0);
  if (row < 0) return;
  workload_fields_->set_base(JsonPointer("/workloads/" + std::to_string(row)));
  workload_fields_->refresh();
  const Json& w = list[static_cast<size_t>(row)];
  const QString type =
      QString::fromStdString(w.is_object() ? w.value("type", "training_read") : "training_read");
  for (const auto& [t, box] : workload_groups_) {
    box->setVisible(t == type || (type == "boot_storm" && t == "block"));
  }
  // A boot storm shows the block group for its volume keys only.
  for (const Field& f : workload_fields_->fields()) {
    const std::string& k = f.spec.key;
    const bool block_only =
        k == "/read_fraction" || k == "/rate_iops" || k == "/duration_s" || k == "/ramp_s";
    if (block_only) {
      f.editor->parentWidget()->setVisible(type == "block");
      if (auto* form =
              qobject_cast<QFormLayout*>(f.editor->parentWidget()->parentWidget()->layout())) {
        if (QWidget* label = form->labelForField(f.editor->parentWidget()))
          label->setVisible(type == "block");
      }
    }
  }
}

void EditorView::refresh_raw() {
  const Json& doc = doc_->json();
  // Text that already says the same (the user's own formatting, as typed) is left alone.
  const Json shown = Json::parse(raw_->toPlainText().toStdString(), nullptr, false, true);
  if (!shown.is_discarded() && shown == doc) return;
  updating_raw_ = true;
  const int position = raw_->textCursor().position();
  raw_->setPlainText(QString::fromStdString(doc.dump(2)));
  QTextCursor c = raw_->textCursor();
  c.setPosition(std::min(position, static_cast<int>(raw_->toPlainText().size())));
  raw_->setTextCursor(c);
  raw_error_->clear();
  updating_raw_ = false;
}

bool EditorView::apply_raw_text() {
  raw_timer_.stop();
  const std::string text = raw_->toPlainText().toStdString();
  try {
    Json j = Json::parse(text, nullptr, true, /*ignore_comments=*/true);
    if (!j.is_object()) {
      raw_error_->setText(tr("The scenario must be a JSON object."));
      return false;
    }
    raw_error_->clear();
    mark_error(raw_, "");
    doc_->replace_all(std::move(j), tr("Edit raw JSON"));
    return true;
  } catch (const Json::parse_error& e) {
    const JsonSyntaxError x = json_syntax_error(text, e);
    raw_error_->setText(tr("Line %1, column %2: %3 (the forms keep the last valid JSON)")
                            .arg(x.line)
                            .arg(x.column)
                            .arg(QString::fromStdString(x.what)));
    return false;
  }
}

void EditorView::mark_tab(QWidget* page, bool error) {
  for (int i = 0; i < tabs_->count(); ++i) {
    QWidget* w = tabs_->widget(i);
    if (w == page || w->isAncestorOf(page)) {
      tabs_->tabBar()->setTabTextColor(i, error ? QColor(0xc6, 0x28, 0x28) : QColor());
    }
  }
}

void EditorView::show_validation(const Validation& v) {
  fields_->clear_errors();
  workload_fields_->clear_errors();
  failures_->clear_errors();
  expectations_->clear_errors();
  for (int i = 0; i < tabs_->count(); ++i) tabs_->tabBar()->setTabTextColor(i, QColor());
  for (int i = 0; i < workload_list_->count(); ++i) {
    workload_list_->item(i)->setData(Qt::BackgroundRole, QVariant());
  }
  error_widget_ = nullptr;
  if (v.ok) {
    status_->setStyleSheet("color: #2e7d32;");
    status_->setText(
        tr("Valid: %1. Run estimate: %2")
            .arg(QString::fromStdString(v.summary), QString::fromStdString(v.estimate)));
    return;
  }
  status_->setStyleSheet("color: #c62828;");
  status_->setText(QString::fromStdString(v.message));
  if (!v.pointer) return;
  const QString message = QString::fromStdString(v.message);
  // Under a field, what follows its path: "expected an integer in 1..65536, found 0".
  const size_t at = v.message.find(v.json_path + ": ");
  const QString detail =
      at == std::string::npos
          ? message
          : QString::fromStdString(v.message.substr(at + v.json_path.size() + 2));
  const std::string p = v.pointer->to_string();
  if (p.rfind("/workloads/", 0) == 0) {
    const int row = std::stoi(p.substr(11));
    if (row < workload_list_->count()) {
      workload_list_->item(row)->setBackground(QColor(0xfd, 0xec, 0xea));
      workload_list_->item(row)->setToolTip(message);
    }
    mark_tab(workload_list_, true);
    if (row == selected_workload()) {
      if (const Field* f = workload_fields_->show_error(*v.pointer, message, detail))
        error_widget_ = f->editor;
    }
    if (!error_widget_) error_widget_ = workload_list_;
    return;
  }
  if (failures_->show_error(*v.pointer, message)) {
    error_widget_ = failures_->table();
  } else if (expectations_->show_error(*v.pointer, message)) {
    error_widget_ = expectations_->table();
  } else if (const Field* f = fields_->show_error(*v.pointer, message, detail)) {
    error_widget_ = f->editor;
  }
  if (error_widget_) mark_tab(error_widget_, true);
}

QWidget* EditorView::field_editor(const std::string& pointer) const {
  for (FieldSet* set : {fields_, workload_fields_}) {
    for (const Field& f : set->fields()) {
      if (set->pointer_of(f).to_string() == pointer) return f.editor;
    }
  }
  return nullptr;
}

QString EditorView::status_text() const {
  return status_->text();
}

}  // namespace granary::gui
