#include "importers/yaml_documents.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>

namespace ward::importers {
namespace {

// Keeps nothing: only where each document starts.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (documents_ > 0 && mark.pos == last_.pos) {
      throw YAML::ParserException(mark,
                                  "a document that consumes no input (the parser would "
                                  "make empty documents here forever)");
    }
    last_ = mark;
    ++documents_;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  YAML::Mark last_;
  size_t documents_ = 0;
};

}  // namespace

std::vector<YAML::Node> LoadYamlDocuments(const std::string& text) {
  {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts starts;
    while (parser.HandleNextDocument(starts)) {
    }
  }
  return YAML::LoadAll(text);
}

}  // namespace ward::importers
