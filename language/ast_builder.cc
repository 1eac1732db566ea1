#include "language/ast_builder.h"

#include <string>

#include "language/literals.h"

namespace ward {

using grammar::WardParser;

OffsetMap::OffsetMap(std::string_view text) : size_(static_cast<uint32_t>(text.size())) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) ascii_ = false;
  }
  if (ascii_) return;
  offsets_.reserve(text.size() + 1);
  for (uint32_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) offsets_.push_back(i);
  }
  offsets_.push_back(size_);
}

uint32_t OffsetMap::ByteOffset(size_t cp) const {
  if (ascii_) return cp < size_ ? static_cast<uint32_t>(cp) : size_;
  return cp < offsets_.size() ? offsets_[cp] : size_;
}

namespace {

class Builder {
 public:
  Builder(FileId file, std::string_view text, const OffsetMap& offsets, DiagnosticSink& sink)
      : file_(file), text_(text), offsets_(offsets), sink_(sink) {}

  ast::File File(WardParser::File_Context* ctx) {
    ast::File f;
    f.id = file_;
    if (auto* h = ctx->header()) f.version = ast::Name{TextOf(h->version), SpanOf(h->version)};
    for (auto* item : ctx->topItem()) {
      if (auto* i = item->importDecl()) f.imports.push_back(Import(i));
      if (auto* l = item->letDecl()) f.lets.push_back(Let(l));
      if (auto* g = item->groupDecl()) f.groups.push_back(Group(g));
      if (auto* p = item->policyDecl()) f.policies.push_back(Policy(p));
    }
    return f;
  }

 private:
  Span SpanOf(antlr4::Token* t) const {
    uint32_t b = offsets_.ByteOffset(t->getStartIndex());
    uint32_t e = offsets_.ByteOffset(t->getStopIndex() + 1);
    return {file_, b, e};
  }
  Span SpanOf(antlr4::tree::TerminalNode* n) const { return SpanOf(n->getSymbol()); }
  Span SpanOf(antlr4::ParserRuleContext* c) const {
    Span s = SpanOf(c->getStart());
    antlr4::Token* stop = c->getStop();
    if (stop && stop->getStopIndex() + 1 >= c->getStart()->getStartIndex()) {
      s.end = offsets_.ByteOffset(stop->getStopIndex() + 1);
    }
    return s;
  }
  // The source text of a token, or of a one-token rule such as `word`. Sliced
  // from the UTF-8 text: ANTLR's getText() converts from UTF-32 every time.
  std::string TextOf(Span s) const { return std::string(text_.substr(s.begin, s.end - s.begin)); }
  std::string TextOf(antlr4::Token* t) const { return TextOf(SpanOf(t)); }
  std::string TextOf(antlr4::tree::TerminalNode* n) const { return TextOf(SpanOf(n)); }
  ast::Name NameOf(antlr4::ParserRuleContext* c) const {
    Span s = SpanOf(c);
    return {TextOf(s), s};
  }

  ast::Import Import(WardParser::ImportDeclContext* c) {
    ast::Import i;
    i.span = SpanOf(c);
    i.path_span = SpanOf(c->STRING());
    i.path = Unescape(c->STRING()->getSymbol(), nullptr);
    return i;
  }

  ast::Let Let(WardParser::LetDeclContext* c) {
    ast::Let l;
    l.span = SpanOf(c);
    l.name = NameOf(c->name);
    l.values = Values(c->values());
    return l;
  }

  ast::SysTarget Target(antlr4::tree::TerminalNode* group, WardParser::WordContext* word) {
    if (group) return {TextOf(group), true, SpanOf(group)};
    ast::Name name = NameOf(word);
    return {std::move(name.text), false, name.span};
  }

  ast::Group Group(WardParser::GroupDeclContext* c) {
    ast::Group g;
    g.span = SpanOf(c);
    g.name = {TextOf(c->GROUPREF()), SpanOf(c->GROUPREF())};
    for (auto* m : c->groupMember()) g.members.push_back(Target(m->GROUPREF(), m->word()));
    return g;
  }

  ast::Policy Policy(WardParser::PolicyDeclContext* c) {
    ast::Policy p;
    p.file = file_;
    p.span = SpanOf(c);
    p.is_abstract = c->ABSTRACT() != nullptr;
    p.name = NameOf(c->name);
    auto words = c->word();
    for (size_t i = 1; i < words.size(); ++i) p.extends.push_back(NameOf(words[i]));
    for (auto* s : c->section()) Section(s, p);
    return p;
  }

  // A section given twice in one policy is an error showing both.
  template <typename T>
  bool FirstOf(const std::optional<T>& existing, Span here, const char* what) {
    if (!existing) return true;
    sink_.Error(Code::kDuplicateSection, here,
                std::string("duplicate ") + what + " section in this policy",
                "merge the two sections into one");
    sink_.AddRelated(existing->span, "first given here");
    return false;
  }

  void Section(WardParser::SectionContext* s, ast::Policy& p) {
    Span span = SpanOf(s);
    if (auto* c = dynamic_cast<WardParser::DescriptionSectionContext*>(s)) {
      if (p.description) {
        sink_.Error(Code::kDuplicateSection, span, "duplicate description in this policy");
        sink_.AddRelated(p.description->second, "first given here");
        return;
      }
      p.description.emplace(Unescape(c->STRING()->getSymbol(), nullptr), span);
    } else if (auto* c = dynamic_cast<WardParser::LabelsSectionContext*>(s)) {
      for (auto* l : c->labelPair()) {
        p.labels.push_back(
            {NameOf(l->key), Unescape(l->STRING()->getSymbol(), nullptr), SpanOf(l->STRING())});
      }
    } else if (auto* c = dynamic_cast<WardParser::FilesystemSectionContext*>(s)) {
      if (!FirstOf(p.filesystem, span, "filesystem")) return;
      ast::FilesystemSection fs{span, {}};
      for (auto* r : c->fsRule()) fs.rules.push_back(FsRule(r));
      p.filesystem = std::move(fs);
    } else if (auto* c = dynamic_cast<WardParser::NetworkSectionContext*>(s)) {
      if (!FirstOf(p.network, span, "network")) return;
      ast::NetworkSection net{span, {}};
      for (auto* r : c->netRule()) net.rules.push_back(NetRule(r));
      p.network = std::move(net);
    } else if (auto* c = dynamic_cast<WardParser::SyscallsSectionContext*>(s)) {
      if (!FirstOf(p.syscalls, span, "syscalls")) return;
      p.syscalls = Syscalls(c, span);
    } else if (auto* c = dynamic_cast<WardParser::ProcessSectionContext*>(s)) {
      if (!FirstOf(p.process, span, "process")) return;
      p.process = Process(c, span);
    } else if (auto* c = dynamic_cast<WardParser::LimitsSectionContext*>(s)) {
      if (!FirstOf(p.limits, span, "limits")) return;
      ast::LimitsSection lim{span, {}};
      for (auto* l : c->limitItem()) {
        lim.limits.push_back({SpanOf(l), NameOf(l->key), Value(l->value()), {}, 0});
      }
      p.limits = std::move(lim);
    } else if (auto* c = dynamic_cast<WardParser::TargetSectionContext*>(s)) {
      ast::TargetSection t;
      t.span = span;
      t.name = NameOf(c->name);
      for (auto* tok : c->targetToken()) t.tokens.push_back(TargetToken(tok));
      p.targets.push_back(std::move(t));
    }
  }

  ast::FsRule FsRule(WardParser::FsRuleContext* c) {
    ast::FsRule r;
    r.span = SpanOf(c);
    r.allow = c->verdict->getType() == WardParser::ALLOW;
    for (auto* right : c->right()) {
      size_t type = right->getStart()->getType();
      r.rights |= type == WardParser::READ    ? ast::kRead
                  : type == WardParser::WRITE ? ast::kWrite
                                              : ast::kExec;
    }
    r.raw = Values(c->values());
    return r;
  }

  ast::NetRule NetRule(WardParser::NetRuleContext* c) {
    ast::NetRule r;
    r.span = SpanOf(c);
    if (auto* u = dynamic_cast<WardParser::UnixRuleContext*>(c)) {
      r.allow = u->verdict->getType() == WardParser::ALLOW;
      r.is_unix = true;
      r.raw_peers = Values(u->values());
      return r;
    }
    if (auto* n = dynamic_cast<WardParser::NetlinkRuleContext*>(c)) {
      r.allow = n->verdict->getType() == WardParser::ALLOW;
      r.is_netlink = true;
      r.raw_peers = Values(n->values());
      return r;
    }
    auto* f = dynamic_cast<WardParser::FlowRuleContext*>(c);
    r.allow = f->verdict->getType() == WardParser::ALLOW;
    if (f->direction) {
      r.direction_span = SpanOf(f->direction);
      r.direction = f->direction->getType() == WardParser::INGRESS ? ast::Direction::kIngress
                                                                   : ast::Direction::kEgress;
    }
    if (f->protocol) {
      r.protocol_span = SpanOf(f->protocol);
      switch (f->protocol->getType()) {
        case WardParser::TCP:
          r.protocol = ast::Protocol::kTcp;
          break;
        case WardParser::UDP:
          r.protocol = ast::Protocol::kUdp;
          break;
        default:
          r.protocol = ast::Protocol::kIcmp;
          break;
      }
    }
    if (f->peer) {
      r.peer_keyword_span = SpanOf(f->peer);
      r.peer_keyword =
          f->peer->getType() == WardParser::TO ? ast::Direction::kEgress : ast::Direction::kIngress;
      r.raw_peers = Values(f->peers);
    }
    if (f->ports) {
      r.ports_keyword_span = SpanOf(f->PORT() ? f->PORT() : f->PORTS());
      r.raw_ports = Values(f->ports);
    }
    return r;
  }

  ast::SysAction Action(WardParser::SysActionContext* c) {
    ast::SysAction a;
    a.span = SpanOf(c);
    // The action is its first token: switch on it rather than asking the
    // context for each keyword (every ask searches the children).
    switch (c->getStart()->getType()) {
      case WardParser::ALLOW:
        a.kind = ast::ActionKind::kAllow;
        break;
      case WardParser::KILL_THREAD:
        a.kind = ast::ActionKind::kKillThread;
        break;
      case WardParser::TRAP:
        a.kind = ast::ActionKind::kTrap;
        break;
      case WardParser::LOG:
        a.kind = ast::ActionKind::kLog;
        break;
      case WardParser::NOTIFY:
        a.kind = ast::ActionKind::kNotify;
        break;
      case WardParser::ERRNO:
        a.kind = ast::ActionKind::kErrno;
        a.errno_text = TextOf(c->errnoValue);
        a.errno_span = SpanOf(c->errnoValue);
        break;
      default:
        a.kind = ast::ActionKind::kKill;
        break;
    }
    return a;
  }

  ast::Expr Expr(WardParser::ExprContext* c) {
    ast::Expr e;
    e.span = SpanOf(c);
    for (auto* w : c->WORD()) e.terms.push_back({TextOf(w), SpanOf(w)});
    return e;
  }

  ast::Condition Condition(WardParser::CondContext* c) {
    ast::Condition k;
    k.span = SpanOf(c);
    if (auto* cmp = dynamic_cast<WardParser::CompareCondContext*>(c)) {
      k.arg_name = {TextOf(cmp->arg), SpanOf(cmp->arg)};
      switch (cmp->op->getType()) {
        case WardParser::EQ:
          k.op = ast::CondOp::kEq;
          break;
        case WardParser::NE:
          k.op = ast::CondOp::kNe;
          break;
        case WardParser::LT:
          k.op = ast::CondOp::kLt;
          break;
        case WardParser::LE:
          k.op = ast::CondOp::kLe;
          break;
        case WardParser::GT:
          k.op = ast::CondOp::kGt;
          break;
        default:
          k.op = ast::CondOp::kGe;
          break;
      }
      k.values.push_back(Expr(cmp->expr()));
    } else if (auto* m = dynamic_cast<WardParser::MaskCondContext*>(c)) {
      k.arg_name = {TextOf(m->arg), SpanOf(m->arg)};
      k.op = ast::CondOp::kMaskedEq;
      k.mask = Expr(m->mask);
      k.values.push_back(Expr(m->expr(1)));
    } else if (auto* in = dynamic_cast<WardParser::InCondContext*>(c)) {
      k.arg_name = {TextOf(in->arg), SpanOf(in->arg)};
      k.op = in->NOT() ? ast::CondOp::kNotIn : ast::CondOp::kIn;
      for (auto* e : in->expr()) k.values.push_back(Expr(e));
    }
    return k;
  }

  ast::SyscallsSection Syscalls(WardParser::SyscallsSectionContext* c, Span span) {
    ast::SyscallsSection s;
    s.span = span;
    for (auto* item : c->sysItem()) {
      if (auto* a = dynamic_cast<WardParser::ArchItemContext*>(item)) {
        for (auto* w : a->word()) s.arches.push_back(NameOf(w));
      } else if (auto* d = dynamic_cast<WardParser::DefaultItemContext*>(item)) {
        if (s.default_action) {
          sink_.Error(Code::kDuplicateEntry, SpanOf(d), "duplicate default action in this section",
                      "keep one `default`");
          sink_.AddRelated(s.default_action->span, "first given here");
          continue;
        }
        s.default_action = Action(d->sysAction());
        s.default_action->span = SpanOf(d);
      } else if (auto* r = dynamic_cast<WardParser::RuleItemContext*>(item)) {
        ast::SysRule rule;
        rule.span = SpanOf(r);
        rule.action = Action(r->sysAction());
        for (auto* t : r->sysTarget()) rule.targets.push_back(Target(t->GROUPREF(), t->word()));
        if (auto* cond = r->condition()) {
          for (auto* k : cond->cond()) rule.conditions.push_back(Condition(k));
        }
        s.rules.push_back(std::move(rule));
      }
    }
    return s;
  }

  ast::ProcessSection Process(WardParser::ProcessSectionContext* c, Span span) {
    ast::ProcessSection p;
    p.span = span;
    for (auto* item : c->procItem()) {
      Span here = SpanOf(item);
      if (dynamic_cast<WardParser::NnpItemContext*>(item)) {
        p.no_new_privileges = here;
      } else if (auto* caps = dynamic_cast<WardParser::CapsItemContext*>(item)) {
        ast::ProcessSection::Caps k;
        k.span = here;
        k.drop = caps->capMode->getType() == WardParser::DROP;
        k.raw = Values(caps->values());
        p.capabilities.push_back(std::move(k));
      } else if (auto* user = dynamic_cast<WardParser::UserItemContext*>(item)) {
        if (p.user) {
          sink_.Error(Code::kDuplicateEntry, here, "duplicate user in this section");
          sink_.AddRelated(p.user->span, "first given here");
          continue;
        }
        p.user = ast::ProcessSection::User{here, TextOf(user->WORD()), 0, 0};
      } else if (auto* env = dynamic_cast<WardParser::EnvItemContext*>(item)) {
        p.env.push_back({here, Values(env->values()), {}});
      }
    }
    return p;
  }

  ast::TargetToken TargetToken(WardParser::TargetTokenContext* c) {
    ast::TargetToken t;
    t.span = SpanOf(c);
    if (c->word()) {
      t.kind = ast::TargetToken::kWord;
      t.value.kind = ast::ValueKind::kWord;
      t.value.text = NameOf(c->word()).text;
      t.value.span = t.span;
    } else if (c->STRING()) {
      t.kind = ast::TargetToken::kString;
      t.value = StringValue(c->STRING()->getSymbol());
    } else if (c->list()) {
      t.kind = ast::TargetToken::kList;
      t.value = List(c->list());
    } else {
      t.kind = ast::TargetToken::kBlock;
      for (auto* l : c->labelPair()) {
        t.block.push_back({NameOf(l->key), StringValue(l->STRING()->getSymbol())});
      }
    }
    return t;
  }

  std::vector<ast::Value> Values(WardParser::ValuesContext* c) {
    std::vector<ast::Value> out;
    for (auto* v : c->value()) out.push_back(Value(v));
    return out;
  }

  ast::Value List(WardParser::ListContext* c) {
    ast::Value v;
    v.kind = ast::ValueKind::kList;
    v.span = SpanOf(c);
    for (auto* item : c->value()) v.items.push_back(Value(item));
    return v;
  }

  // A value is one token or a list; its first token says which, without
  // the generated accessors' search of the children.
  ast::Value Value(WardParser::ValueContext* c) {
    antlr4::Token* t = c->getStart();
    switch (t->getType()) {
      case WardParser::LBRACKET:
        return List(c->list());
      case WardParser::STRING:
        return StringValue(t);
      default:
        break;
    }
    ast::Value v;
    v.span = SpanOf(t);
    v.text = TextOf(v.span);
    v.kind = t->getType() == WardParser::ANY        ? ast::ValueKind::kAny
             : t->getType() == WardParser::LOOPBACK ? ast::ValueKind::kLoopback
                                                    : ast::ValueKind::kWord;
    return v;
  }

  ast::Value StringValue(antlr4::Token* t) {
    ast::Value v;
    v.kind = ast::ValueKind::kString;
    v.span = SpanOf(t);
    v.text = Unescape(t, &v.pieces);
    return v;
  }

  // Unescapes a STRING token. With `pieces`, `${name}` splits the string into
  // literal and reference pieces; without, `${` is kept literally.
  std::string Unescape(antlr4::Token* t, std::vector<ast::StringPiece>* pieces) {
    Span span = SpanOf(t);
    const std::string raw = TextOf(span);
    std::string out;
    std::string literal;
    uint32_t literal_begin = span.begin + 1;
    bool interpolated = false;
    for (size_t i = 1; i + 1 < raw.size(); ++i) {
      char c = raw[i];
      uint32_t at = span.begin + static_cast<uint32_t>(i);
      if (c == '\\') {
        char n = raw[i + 1];
        char r = n == 'n' ? '\n' : n == 't' ? '\t' : (n == '"' || n == '\\' || n == '$') ? n : 0;
        if (r == 0) {
          sink_.Error(Code::kInvalidEscape, {file_, at, at + 2},
                      "invalid escape '\\" + std::string(1, n) + "' in string",
                      "the escapes are \\\", \\\\, \\n, \\t and \\$");
        }
        out += r ? r : n;
        literal += r ? r : n;
        ++i;
        continue;
      }
      if (c == '$' && i + 2 < raw.size() && raw[i + 1] == '{' && pieces) {
        size_t close = raw.find('}', i + 2);
        if (close == std::string::npos || close + 1 >= raw.size() + 0 || close >= raw.size() - 1) {
          sink_.Error(Code::kBadInterpolation, {file_, at, at + 2}, "unterminated '${' in string",
                      "write ${name}, or \\$ for a literal dollar sign");
          break;
        }
        std::string name = raw.substr(i + 2, close - i - 2);
        Span name_span{file_, at, span.begin + static_cast<uint32_t>(close) + 1};
        if (!IsIdentifier(name)) {
          sink_.Error(Code::kBadInterpolation, name_span, "'${" + name + "}' does not name a let",
                      "write ${name}");
        }
        if (!literal.empty()) {
          pieces->push_back({false, literal, {file_, literal_begin, at}});
        }
        pieces->push_back({true, name, name_span});
        literal.clear();
        literal_begin = name_span.end;
        interpolated = true;
        i = close;
        continue;
      }
      out += c;
      literal += c;
    }
    if (interpolated && !literal.empty()) {
      pieces->push_back({false, literal, {file_, literal_begin, span.end - 1}});
    }
    return out;
  }

  FileId file_;
  std::string_view text_;
  const OffsetMap& offsets_;
  DiagnosticSink& sink_;
};

}  // namespace

ast::File BuildAst(WardParser::File_Context* tree, FileId file, std::string_view text,
                   const OffsetMap& offsets, DiagnosticSink& sink) {
  return Builder(file, text, offsets, sink).File(tree);
}

}  // namespace ward
