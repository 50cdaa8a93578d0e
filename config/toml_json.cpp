#include "config/toml_json.hpp"

#include <sstream>

namespace jp {

Json toml_to_json(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return Json(std::string(n.as_string()->get()));
    case toml::node_type::integer:
      return Json(n.as_integer()->get());
    case toml::node_type::floating_point:
      return Json(n.as_floating_point()->get());
    case toml::node_type::boolean:
      return Json(n.as_boolean()->get());
    case toml::node_type::array: {
      auto out = Json::array();
      for (auto& e : *n.as_array())
        out.push(toml_to_json(e));
      return out;
    }
    case toml::node_type::table: {
      auto out = Json::object();
      for (auto&& [k, v] : *n.as_table())
        out.set(k.str(), toml_to_json(v));
      return out;
    }
    default: {
      std::ostringstream s;
      n.visit([&](auto&& v) { s << v; });
      return Json(s.str());
    }
  }
}

} // namespace jp
