#include "files.h"

#include "errors.h"

#include <fstream>
#include <sstream>

namespace shardscope {

std::string readTextFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw PlanError(path, "cannot be read (no such file or no permission)");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad())
        throw PlanError(path, "cannot be read (read error)");
    return ss.str();
}

} // namespace shardscope
