//! Parameters of Lua components that are objects of the program, not numbers: a robot
//! (`morc.robot { … }`) or a model. A component declares one with a placeholder,
//! `params = { robot = morc.ROBOT }` (or `morc.MODEL`), and is handed the object by
//! `a:add(name, kind, { robot = r })`; its own Lua state (the stepping thread's) then sees
//! `self.robot`: the same robot, read-only, its immutable model shared (`Arc`), not built again
//! from the robot file. Nothing of this runs per step: the objects are made at `init`.
//!
//! To the kernel such a parameter is a string, so kinds stay checkable offline and `morc doc`
//! describes them like any other: a robot module's name ("robots.ur5"), which the stepping
//! thread's state requires when no object was handed (an assembly built in Rust, Assembly Data),
//! as components did before they could be handed one. Not given at `a:add`: the robot on the
//! engine (`morc.use_robot`). A number where a robot belongs, or a robot where a number does, is
//! an error naming the component and the parameter.

use std::sync::Arc;

use mlua::{Lua, Table, UserData, UserDataMethods};

use crate::kinds::instance::LuaComponent;
use crate::model::LuaModel;
use crate::LuaRobot;
use morc_kernel::{Component, Factory, ParamInfo, Value};
use morc_model::Model;
use morc_robot::Robot;

/// What an object parameter takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wants {
    /// A robot (`morc.ROBOT`): the component sees the robot, its model at `.model`.
    Robot,
    /// A model (`morc.MODEL`): the component sees a model; a robot given is taken for its model.
    Model,
}

impl Wants {
    fn noun(self) -> &'static str {
        match self {
            Wants::Robot => "a robot (morc.robot { … })",
            Wants::Model => "a model or a robot (its model)",
        }
    }

    /// The parameter as the kernel knows it: a string, a robot module's name when given as one.
    fn param_info(self, name: &str) -> ParamInfo {
        let doc = match self {
            Wants::Robot => {
                format!("a robot (morc.robot {{ … }}): self.{name} is that robot, read-only; default: the robot on the engine (morc.use_robot); a robot module's name (\"robots.ur5\") is taken too")
            }
            Wants::Model => {
                format!("a model, or a robot (its model): self.{name} is that model; default: the model of the robot on the engine (morc.use_robot); a module's name (\"robots.ur5\") is taken too")
            }
        };
        ParamInfo::new(name, Value::String(String::new())).doc(&doc)
    }
}

/// A parameter of a Lua component kind that takes an object.
#[derive(Clone, Debug)]
pub struct ObjectParam {
    /// The parameter's name (`robot` for `params = { robot = morc.ROBOT }`).
    pub name: String,
    /// What it takes.
    pub wants: Wants,
}

/// An object handed to a component: shared with the program, immutable.
#[derive(Clone)]
pub enum Shared {
    /// A robot: its joints, limits, groups and model.
    Robot(Arc<Robot>),
    /// A model.
    Model(Arc<Model>),
}

/// `morc.ROBOT` and `morc.MODEL`: what a component's params declare an object parameter with.
#[derive(Clone, Copy)]
struct Placeholder(Wants);

impl UserData for Placeholder {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method("__tostring", |_, this, ()| {
            Ok(match this.0 {
                Wants::Robot => "morc.ROBOT",
                Wants::Model => "morc.MODEL",
            })
        });
    }
}

/// Installs `morc.ROBOT` and `morc.MODEL`.
pub(crate) fn install(lua: &Lua, morc: &Table) -> mlua::Result<()> {
    let robot = lua.create_userdata(Placeholder(Wants::Robot))?;
    let model = lua.create_userdata(Placeholder(Wants::Model))?;
    morc.set("ROBOT", robot.clone())?;
    morc.set("MODEL", model.clone())?;
    crate::linalg::doc(
        morc,
        robot,
        "morc.ROBOT: userdata — declares a Lua component's parameter that takes a robot: morc.component { params = { robot = morc.ROBOT }, … }; \
         a:add(name, kind, { robot = r }) hands it robot r (default: the robot on the engine), and in the component self.robot is r, read-only, \
         its model (self.robot.model) shared, not built again: joints, limits, groups, frame_jacobian_to, rnea_to, … A robot module's name \
         (\"robots.ur5\") is taken too; a number there, or a robot for another parameter, is an error naming the component and parameter.",
    )?;
    crate::linalg::doc(
        morc,
        model,
        "morc.MODEL: userdata — declares a Lua component's parameter that takes a model (morc.model …, robot.model) or a robot, whose model \
         it takes: params = { model = morc.MODEL }; in the component self.model is the model (its own workspace, the model shared). \
         Default: the model of the robot on the engine.",
    )?;
    Ok(())
}

/// The object parameter `v` of a component's params declares, if it is a placeholder.
pub(crate) fn declared(name: &str, v: &mlua::Value) -> Option<(ParamInfo, ObjectParam)> {
    let wants = v.as_userdata()?.borrow::<Placeholder>().ok()?.0;
    Some((wants.param_info(name), ObjectParam { name: name.to_string(), wants }))
}

/// The object parameters of the kind `probe` is an instance of (none but for Lua components).
pub(crate) fn of_kind(probe: &mut dyn Component) -> Vec<ObjectParam> {
    probe.as_any_mut().and_then(|a| a.downcast_mut::<LuaComponent>()).map_or_else(Vec::new, |c| c.def().objects.clone())
}

/// What help shows as a parameter's default: the placeholder for an object parameter.
pub(crate) fn shown_default(lua: &Lua, objects: &[ObjectParam], param: &str) -> mlua::Result<Option<mlua::Value>> {
    match objects.iter().find(|p| p.name == param) {
        Some(p) => lua.globals().get::<Table>("morc")?.get::<mlua::Value>(if p.wants == Wants::Robot { "ROBOT" } else { "MODEL" }).map(Some),
        None => Ok(None),
    }
}

/// The object `v` (a robot, a model, or a module's name) for `param` of component `component`.
pub(crate) fn take(lua: &Lua, param: &ObjectParam, v: &mlua::Value, component: &str) -> Result<Shared, String> {
    let name = &param.name;
    let about = if component.is_empty() { format!("parameter '{name}'") } else { format!("{component}: parameter '{name}'") };
    match v {
        mlua::Value::UserData(ud) if ud.is::<LuaRobot>() => {
            let robot = ud.borrow::<LuaRobot>().map_err(|e| e.to_string())?.0.clone();
            Ok(match param.wants {
                Wants::Robot => Shared::Robot(robot),
                Wants::Model => Shared::Model(robot.model.clone()),
            })
        }
        mlua::Value::UserData(ud) if ud.is::<LuaModel>() => match param.wants {
            Wants::Model => Ok(Shared::Model(ud.borrow::<LuaModel>().map_err(|e| e.to_string())?.model.clone())),
            Wants::Robot => Err(format!("{about} takes {}, got a model: give the robot, whose model is robot.model", Wants::Robot.noun())),
        },
        mlua::Value::String(s) => {
            let module = s.to_str().map_err(|e| e.to_string())?.to_string();
            let require: mlua::Function = lua.globals().get("require").map_err(|e| e.to_string())?;
            let loaded = require.call::<mlua::Value>(module.as_str()).map_err(|e| format!("{about}: cannot load its robot module '{module}': {}", first_line(&e)))?;
            match loaded {
                mlua::Value::UserData(ref ud) if ud.is::<LuaRobot>() || ud.is::<LuaModel>() => take(lua, param, &loaded, component),
                other => Err(format!("{about}: module '{module}' returns a {}, not {}", other.type_name(), param.wants.noun())),
            }
        }
        other => Err(format!("{about} takes {} or a robot module's name, got a {}", param.wants.noun(), type_name(other))),
    }
}

/// A value for a parameter that takes no object: an error when it is a robot or a model.
pub(crate) fn refuse(v: &mlua::Value, param: &str, component: &str) -> Result<(), String> {
    match v {
        mlua::Value::UserData(ud) if ud.is::<LuaRobot>() || ud.is::<LuaModel>() => {
            Err(format!("{component}: parameter '{param}' takes a number, boolean, string or list of numbers, not a {}: only a parameter declared morc.ROBOT or morc.MODEL takes one", type_name(v)))
        }
        _ => Ok(()),
    }
}

/// The object for `param` when `a:add` gave none: the robot on the engine (or its model).
pub(crate) fn default(lua: &Lua, param: &ObjectParam, component: &str) -> Result<Shared, String> {
    let current: mlua::Value = lua.globals().get::<Table>("morc").and_then(|m| m.get("current_robot")).map_err(|e| e.to_string())?;
    if current.is_nil() {
        return Err(format!("{component}: parameter '{}' needs {}: give it ({} = r), or put a robot on the engine first (morc.use_robot(r))", param.name, param.wants.noun(), param.name));
    }
    take(lua, param, &current, component)
}

/// A factory of `probe`'s kind (a Lua component) whose instances are handed `objects`.
pub(crate) fn handing(probe: &mut dyn Component, objects: Vec<(String, Shared)>) -> Option<Factory> {
    let def = probe.as_any_mut()?.downcast_mut::<LuaComponent>()?.def().clone();
    Some(Arc::new(move || Ok(Box::new(LuaComponent::new(def.clone()).handed(objects.clone())) as Box<dyn Component>)))
}

/// The robots handed to the components of a stepping thread's state: read-only there.
struct Handed(Vec<Arc<Robot>>);

/// What `self.NAME` holds in a stepping thread's state for object parameter `param`: the
/// object handed, else the module named by the parameter's string `module` (required in this
/// state), else an error (the engine names the component).
pub(crate) fn in_state(lua: &Lua, param: &ObjectParam, handed: Option<&Shared>, module: &str) -> Result<mlua::Value, String> {
    let shared = match handed {
        Some(s) => s.clone(),
        None if !module.is_empty() => take(lua, param, &mlua::Value::String(lua.create_string(module).map_err(|e| e.to_string())?), "")?,
        None => return Err(format!("parameter '{}' needs {}: a:add(name, kind, {{ {} = r }}), or morc.use_robot(r) before a:add", param.name, param.wants.noun(), param.name)),
    };
    let ud = match shared {
        Shared::Robot(robot) => {
            match lua.app_data_mut::<Handed>() {
                Some(mut h) if !h.0.iter().any(|r| Arc::ptr_eq(r, &robot)) => h.0.push(robot.clone()),
                Some(_) => {}
                None => {
                    lua.set_app_data(Handed(vec![robot.clone()]));
                }
            }
            lua.create_userdata(LuaRobot(robot))
        }
        Shared::Model(model) => lua.create_userdata(LuaModel::new(model)),
    };
    ud.map(mlua::Value::UserData).map_err(|e| e.to_string())
}

/// Refuses to change `robot` (`what`: the method) where it was handed to a component.
pub(crate) fn check_writable(lua: &Lua, robot: &Arc<Robot>, what: &str) -> mlua::Result<()> {
    if lua.app_data_ref::<Handed>().is_some_and(|h| h.0.iter().any(|r| Arc::ptr_eq(r, robot))) {
        return Err(mlua::Error::runtime(format!("robot:{what}: robot '{}' was handed to this component, which sees it read-only: change it in the program, before the assembly is made", robot.name)));
    }
    Ok(())
}

fn type_name(v: &mlua::Value) -> &'static str {
    match v {
        mlua::Value::UserData(ud) if ud.is::<LuaRobot>() => "robot",
        mlua::Value::UserData(ud) if ud.is::<LuaModel>() => "model",
        mlua::Value::Integer(_) | mlua::Value::Number(_) => "number",
        other => other.type_name(),
    }
}

fn first_line(e: &mlua::Error) -> String {
    crate::kinds::instance::lua_error_text(e).lines().next().unwrap_or_default().to_string()
}
