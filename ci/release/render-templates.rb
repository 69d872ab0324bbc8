#!/usr/bin/env ruby
# Renders every template of a BOSH release job the way the Director does, for
# the release's specs (manifests/*_test.go); no bosh CLI or Director needed.
#
#   ruby ci/release/render-templates.rb JOB_DIR OUT_DIR < context.json
#
# context.json: {"properties": {...}, "spec": {...}, "links": {...}}, where
# properties are the job's properties as a deployment manifest gives them.
# As the Director does, only the properties the job spec declares reach the
# templates, each one taking its spec default when the manifest leaves it out
# (or sets it to null); p() of a property without value or default fails.
# Templates see p, if_p, properties, raw_properties, spec (name, index, id,
# az, bootstrap, deployment, address, ip, networks, job.name, properties),
# name, index, link and if_link (links the spec consumes only). ERB runs with
# trim_mode '-'. Files land in OUT_DIR at their spec destination, bin/* with
# mode 0755. On an error it prints "Error filling in template 'T' (line N:
# message)" as the Director does and exits 1.
require 'erb'
require 'fileutils'
require 'json'
require 'ostruct'
require 'yaml'

# UnknownProperty is what p raises for a property without value or default.
class UnknownProperty < StandardError
  def initialize(names)
    super("Can't find property '#{names.inspect}'")
  end
end

# The if_p/if_link result: runs the else block when nothing was yielded.
class ElseBlock
  def initialize(active, context = nil)
    @active = active
    @context = context
  end

  def else
    yield if @active
  end

  def else_if_p(*names, &block)
    @active ? @context.if_p(*names, &block) : self
  end
end

# Context is the template's binding: the helpers BOSH's EvaluationContext has.
class Context
  attr_reader :raw_properties, :properties, :spec, :name, :index

  def initialize(instance, props, links)
    @raw_properties = props
    @properties = to_ostruct(props)
    @spec = to_ostruct(instance.merge('properties' => props))
    @name = instance['job']['name']
    @index = instance['index']
    @links = links
  end

  def p(*args)
    names = Array(args[0])
    names.each do |n|
      value = lookup(@raw_properties, n)
      return value unless value.nil?
    end
    return args[1] if args.length == 2

    raise UnknownProperty, names
  end

  def if_p(*names)
    values = names.map do |n|
      value = lookup(@raw_properties, n)
      return ElseBlock.new(true, self) if value.nil?

      value
    end
    yield(*values)
    ElseBlock.new(false)
  end

  def link(name)
    @links.fetch(name) { raise "Can't find link '#{name}'" }
  end

  def if_link(name)
    return ElseBlock.new(true) unless @links.key?(name)

    yield @links[name]
    ElseBlock.new(false)
  end

  def binding_for_template
    binding
  end

  private

  def lookup(tree, dotted)
    dotted.split('.').reduce(tree) { |node, key| node.is_a?(Hash) ? node[key] : nil }
  end

  def to_ostruct(value)
    case value
    when Hash then OpenStruct.new(value.transform_values { |v| to_ostruct(v) })
    when Array then value.map { |v| to_ostruct(v) }
    else value
    end
  end
end

# bind gives each declared property its manifest value or its default.
def bind(declared, given)
  declared.each_with_object({}) do |(dotted, definition), out|
    value = dotted.split('.').reduce(given) { |node, key| node.is_a?(Hash) ? node[key] : nil }
    value = Marshal.load(Marshal.dump((definition || {})['default'])) if value.nil?
    next if value.nil?

    *parents, leaf = dotted.split('.')
    parents.reduce(out) { |node, key| node[key] ||= {} }[leaf] = value
  end
end

def default_instance(job, overrides)
  {
    'name' => job, 'index' => 0, 'id' => '5f2b3c1e-0000-4000-8000-000000000001', 'az' => 'z1',
    'bootstrap' => true, 'deployment' => job, 'address' => '10.0.0.10', 'ip' => '10.0.0.10',
    'networks' => { 'default' => { 'ip' => '10.0.0.10', 'default' => %w[dns gateway] } },
    'job' => { 'name' => job },
  }.merge(overrides)
end

job_dir, out_dir = ARGV
abort 'usage: render-templates.rb JOB_DIR OUT_DIR < context.json' unless job_dir && out_dir
job_spec = YAML.safe_load(File.read(File.join(job_dir, 'spec')))
input = JSON.parse($stdin.read)
consumed = (job_spec['consumes'] || []).map { |c| c['as'] || c['name'] }
links = (input['links'] || {}).select { |name, _| consumed.include?(name) }
links = links.transform_values { |l| Context.new(default_instance(job_spec['name'], {}), l['properties'] || {}, {}) }
context = Context.new(default_instance(job_spec['name'], input['spec'] || {}),
                      bind(job_spec['properties'] || {}, input['properties'] || {}), links)

(job_spec['templates'] || {}).each do |source, dest|
  path = File.join(job_dir, 'templates', source)
  erb = ERB.new(File.read(path), trim_mode: '-')
  erb.filename = source
  begin
    text = erb.result(context.binding_for_template)
  rescue StandardError, ScriptError => e
    line = e.backtrace.to_a.map { |l| l[/\A#{Regexp.escape(source)}:(\d+)/, 1] }.compact.first
    warn "Error filling in template '#{source}' (line #{line || '?'}: #{e.message})"
    exit 1
  end
  target = File.join(out_dir, dest)
  FileUtils.mkdir_p(File.dirname(target))
  File.write(target, text)
  File.chmod(dest.start_with?('bin/') ? 0o755 : 0o644, target)
end
