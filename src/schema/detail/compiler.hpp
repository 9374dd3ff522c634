#pragma once
// The compiler behind Schema::compile(), shared by compile.cpp (resources, anchors,
// references) and keywords.cpp (keywords). Not part of the public interface.
#include "schema/detail/compiled.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sluice::schema::detail {

std::optional<Dialect> dialect_of(std::string_view uri);
std::string escape_pointer_token(std::string_view token);

// Compiles one document into a Schema::Compiled. Pass 1 (index) records every resource
// (`$id`), anchor and subschema location; pass 2 compiles the root and its subschemas, and
// through a work list every reference target, so reference cycles compile once and recursion
// stays within Options::max_depth. The first error stops both passes and is the result.
// One Compiler per compile() call, on the caller's thread; it borrows the Compiled it fills,
// which points into the document that Compiled owns.
class Compiler {
 public:
  Compiler(Schema::Compiled& out, Dialect dialect) : out_(out), dialect_(dialect) {}

  // The first error, or nullopt when the Compiled is complete.
  std::optional<core::Error> run();

 private:
  static constexpr std::string_view kDefaultBase = "urn:sluice:schema";

  struct Location {
    std::uint32_t resource = 0;
    std::string pointer;
  };

  // Appends one token to where_ for the lifetime of the guard.
  class Step {
   public:
    Step(std::string& where, std::string_view token) : where_(where), size_(where.size()) {
      where_ += '/';
      where_ += escape_pointer_token(token);
    }
    Step(std::string& where, std::size_t index) : Step(where, std::to_string(index)) {}
    ~Step() { where_.resize(size_); }
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;

   private:
    std::string& where_;
    std::size_t size_;
  };

  bool fail(std::string_view kind);
  bool is_2020() const { return dialect_ == Dialect::draft2020_12; }

  // compile.cpp: resources, anchors, locations and references.
  // Pass 1: resources ($id), anchors and the location of every subschema.
  bool index(const boost::json::value& v, std::uint32_t resource, std::size_t depth);
  bool add_id(const boost::json::value& v, std::string_view id, std::uint32_t& resource);
  bool add_anchor(const boost::json::value& v, std::uint32_t resource, std::string_view name);
  // The node for a schema value: allocated on first sight, compiled by drain().
  NodeId node_for(const boost::json::value& v);
  bool drain();
  // Resolves a reference to the value it names within this document.
  bool resolve(std::string_view reference, std::uint32_t resource,
               const boost::json::value*& target, std::string* anchor);
  bool walk_pointer(const boost::json::value& root, std::uint32_t resource,
                    std::string_view pointer, const boost::json::value*& target);
  bool compile_ref(const boost::json::object& obj, std::uint32_t resource, Node& n);
  bool index_children(const boost::json::object& obj, std::uint32_t resource, std::size_t depth);

  // keywords.cpp: keywords, subschemas and their values.
  bool compile(NodeId id, const boost::json::value& v, std::uint32_t resource, std::size_t depth);
  bool compile_assertions(const boost::json::object& obj, Node& n);
  bool compile_object_keywords(const boost::json::object& obj, std::uint32_t resource,
                               std::size_t depth, Node& n);
  bool compile_array_keywords(const boost::json::object& obj, std::uint32_t resource,
                              std::size_t depth, Node& n);
  // A structural child: compiled now, within the depth bound.
  bool child(const boost::json::value& v, std::uint32_t resource, std::size_t depth, NodeId& out);
  bool child_at(const boost::json::object& obj, std::string_view keyword, std::uint32_t resource,
                std::size_t depth, NodeId& out);
  bool child_list(const boost::json::object& obj, std::string_view keyword, std::uint32_t resource,
                  std::size_t depth, std::vector<NodeId>& out);
  bool child_map(const boost::json::object& obj, std::string_view keyword, std::uint32_t resource,
                 std::size_t depth, std::vector<NamedNode>* out);
  bool count_at(const boost::json::object& obj, std::string_view keyword, std::uint64_t& out);
  bool number_at(const boost::json::object& obj, std::string_view keyword,
                 const boost::json::value*& out);
  bool names_at(const boost::json::value& v, std::vector<std::string>& out);
  const RE2* regex(std::string_view pattern);
  bool types_at(const boost::json::object& obj, std::uint8_t& out);

  Schema::Compiled& out_;
  Dialect dialect_;
  std::optional<core::Error> error_;
  std::string where_;
  std::unordered_map<std::string, std::uint32_t> resource_by_uri_;
  std::vector<const boost::json::value*> resource_roots_;
  std::vector<std::vector<std::pair<std::string, const boost::json::value*>>>
      dynamic_anchor_values_;
  std::unordered_map<std::string, const boost::json::value*> anchors_;
  std::unordered_map<const boost::json::value*, Location> located_;
  std::unordered_map<const boost::json::value*, Location> unlocated_;
  std::unordered_map<const boost::json::value*, NodeId> ids_;
  std::vector<const boost::json::value*> pending_;
};

}  // namespace sluice::schema::detail
